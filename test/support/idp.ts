// A local identity provider for tests: jose key pairs, a JWKS served over real HTTP on a loopback
// port (node:http), switchable behaviours, a fetch counter, and a token issuer.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export type IdpBehaviour =
  /** Serve the published keys. */
  | 'normal'
  /** Accept the request and never answer. */
  | 'hang'
  /** Answer 500. */
  | 'error500'
  /** Answer {"keys": []}. */
  | 'empty'
  /** Answer a set with no usable signing key (an encryption key, a symmetric key, an HMAC alg). */
  | 'unusable'
  /** Answer text that is not JSON. */
  | 'garbage';

export interface IdpKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface IssueOptions {
  sub: string;
  aud?: string | string[];
  scope?: string | string[];
  client_id?: string;
  azp?: string;
  /** Seconds since the epoch; default now + 3600. */
  exp?: number;
  iat?: number;
  /** Default: the current signing key. A kid not in the key ring signs with a fresh unpublished key. */
  kid?: string;
  iss?: string;
  jti?: string;
  claims?: Record<string, unknown>;
}

export interface TestIdp {
  issuer: string;
  jwksUrl: string;
  /** Requests to the JWKS path so far. */
  fetchCount(): number;
  resetFetchCount(): void;
  setBehaviour(behaviour: IdpBehaviour): void;
  behaviour(): IdpBehaviour;
  /** Current signing key. */
  signingKey(): IdpKey;
  /** kids currently published. */
  publishedKids(): string[];
  /** A new RS256 key becomes the signing key and is published; keepOld false drops the old ones. */
  rotate(options?: { keepOld?: boolean }): Promise<IdpKey>;
  issueToken(options: IssueOptions): Promise<string>;
  close(): Promise<void>;
}

async function makeKey(kid: string, alg: 'RS256' | 'ES256'): Promise<IdpKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

export async function startIdp(options: { issuer?: string } = {}): Promise<TestIdp> {
  let counter = 0;
  const keys = new Map<string, IdpKey>();
  const primary = await makeKey('rsa-1', 'RS256');
  const extra = await makeKey('ec-1', 'ES256');
  keys.set(primary.kid, primary);
  keys.set(extra.kid, extra);
  let published = [primary.kid, extra.kid];
  let signing = primary;
  let behaviour: IdpBehaviour = 'normal';
  let fetches = 0;
  const hanging = new Set<ServerResponse>();

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    fetches += 1;
    switch (behaviour) {
      case 'hang':
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      case 'error500':
        res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
        return;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json');
        return;
      case 'empty':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [] }));
        return;
      case 'unusable': {
        const enc = { ...primary.publicJwk, kid: 'enc-1', use: 'enc' };
        const oct = { kty: 'oct', kid: 'hmac-1', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', alg: 'HS256' };
        const badAlg = { ...primary.publicJwk, kid: 'none-1', alg: 'none' };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [enc, oct, badAlg] }));
        return;
      }
      default:
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ keys: published.map((kid) => keys.get(kid)!.publicJwk) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const issuer = options.issuer ?? `${origin}/`;

  return {
    issuer,
    jwksUrl: `${origin}/.well-known/jwks.json`,
    fetchCount: () => fetches,
    resetFetchCount: () => {
      fetches = 0;
    },
    setBehaviour: (next) => {
      behaviour = next;
      if (next !== 'hang') for (const res of hanging) res.destroy();
    },
    behaviour: () => behaviour,
    signingKey: () => signing,
    publishedKids: () => [...published],
    async rotate({ keepOld = true } = {}) {
      counter += 1;
      const key = await makeKey(`rsa-rotated-${counter}`, 'RS256');
      keys.set(key.kid, key);
      published = keepOld ? [...published, key.kid] : [key.kid];
      signing = key;
      return key;
    },
    async issueToken(o: IssueOptions) {
      let key = o.kid ? keys.get(o.kid) : signing;
      if (!key) {
        key = await makeKey(o.kid!, 'RS256'); // unpublished
        keys.set(key.kid, key);
      }
      const now = Math.floor(Date.now() / 1000);
      const payload: Record<string, unknown> = { ...(o.claims ?? {}) };
      if (o.scope !== undefined) payload.scope = Array.isArray(o.scope) ? o.scope.join(' ') : o.scope;
      if (o.client_id !== undefined) payload.client_id = o.client_id;
      if (o.azp !== undefined) payload.azp = o.azp;
      let jwt = new SignJWT(payload)
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
        .setSubject(o.sub)
        .setIssuer(o.iss ?? issuer)
        .setIssuedAt(o.iat ?? now)
        .setExpirationTime(o.exp ?? now + 3600);
      if (o.aud !== undefined) jwt = jwt.setAudience(o.aud);
      if (o.jti !== undefined) jwt = jwt.setJti(o.jti);
      return jwt.sign(key.privateKey);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
