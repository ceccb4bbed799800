// OAuth access tokens: real JWTs from the loopback IdP, real HTTP for its key set, a real database.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../runtime/data/client.ts';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { createAuthenticator, type Authenticator } from '../../runtime/auth/authenticate.ts';
import { KeySetCache } from '../../runtime/auth/key-set.ts';
import { freshDatabase } from '../support/db.ts';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { eq } from 'drizzle-orm';
import { oauthGrants } from '../../runtime/data/schema.ts';
import { addClient, addGrant, addMembership, addOauthClient, addUser, rejection, ROLE_SCOPES, SCOPES } from './fixtures.ts';

const BASE = 'https://api.example.test';
const MCP_AUD = `${BASE}/mcp`;

let database: Database;
let idp: TestIdp;
const open: Authenticator[] = [];

function makeAuth(overrides: Partial<Config> = {}, jwks?: KeySetCache): Authenticator {
  const config = loadConfig({}, { baseUrl: BASE, oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, ...overrides });
  const auth = createAuthenticator({ db: database.db, database, config, scopes: SCOPES, roleScopes: ROLE_SCOPES, jwks });
  open.push(auth);
  return auth;
}

let owner: { id: string; sub: string };
let viewer: { id: string; sub: string };
let disabled: { id: string; sub: string };
let clientAdmin: { id: string; sub: string };
let ownerGrant: string;

beforeAll(async () => {
  database = await freshDatabase();
  idp = await startIdp();
  for (const c of ['c1', 'c2', 'c3']) await addClient(database, c);
  owner = await addUser(database, { kind: 'operator', role: 'owner', allClients: true });
  viewer = await addUser(database, { kind: 'operator', role: 'viewer', allClients: true });
  disabled = await addUser(database, { kind: 'operator', role: 'owner', allClients: true, disabled: true });
  clientAdmin = await addUser(database, { kind: 'client_admin', role: 'client_admin' });
  await addMembership(database, { userId: clientAdmin.id, clientId: 'c1', role: 'tasks:read' });
  await addMembership(database, { userId: clientAdmin.id, clientId: 'c2', role: 'manager' });
  await addMembership(database, { userId: clientAdmin.id, clientId: 'c3', role: 'crm:read', status: 'revoked' });
  ownerGrant = await addGrant(database, { userId: owner.id, oauthClientId: 'app1', scopes: ['tasks:read', 'tasks:write', 'pii:read'] });
  await addGrant(database, { userId: owner.id, oauthClientId: 'app-revoked', scopes: ['tasks:read'], revoked: true });
  await addGrant(database, { userId: viewer.id, oauthClientId: 'app1', scopes: ['tasks:read', 'pii:read'] });
  await addGrant(database, { userId: disabled.id, oauthClientId: 'app1', scopes: ['tasks:read'] });
  await addGrant(database, { userId: clientAdmin.id, oauthClientId: 'app1', scopes: ['tasks:read', 'crm:read', 'pii:read'] });
  await addOauthClient(database, { id: 'app1', allowlisted: true, scopeCeiling: ['tasks:read', 'pii:read'] });
  await addOauthClient(database, { id: 'app-off', allowlisted: false, scopeCeiling: ['tasks:read'] });
  await addGrant(database, { userId: owner.id, oauthClientId: 'app-off', scopes: ['tasks:read'] });
  await addGrant(database, { userId: owner.id, oauthClientId: 'app-norow', scopes: ['tasks:read'] });
}, 60_000);

afterEach(async () => {
  idp.setBehaviour('normal');
  for (const a of open.splice(0)) await a.close();
});

afterAll(async () => {
  await database?.close();
  await idp.close();
});

const bearer = (t: string) => `Bearer ${t}`;
const tok = (o: Partial<Parameters<TestIdp['issueToken']>[0]> = {}) =>
  idp.issueToken({ sub: owner.sub, aud: MCP_AUD, scope: 'tasks:read tasks:write', client_id: 'app1', ...o });

describe('OAuth access tokens', () => {
  it('accepts the /mcp audience and the base audience', async () => {
    const auth = makeAuth();
    for (const aud of [MCP_AUD, BASE, ['https://other.example', MCP_AUD]]) {
      const p = await auth.authenticate(bearer(await tok({ aud })), null);
      expect(p).toMatchObject({
        kind: 'operator',
        id: owner.id,
        loginMethod: 'oauth',
        credentialId: ownerGrant,
        role: 'owner',
        clientScope: { all: true, clientIds: [] },
        oauthClientId: 'app1',
      });
      expect([...p.scopes]).toEqual(['tasks:read', 'tasks:write']);
    }
  });

  it('refuses other audiences, and no audience', async () => {
    const auth = makeAuth();
    for (const aud of ['https://other.example', `${BASE}/v1`, undefined]) {
      expect((await rejection(auth.authenticate(bearer(await tok({ aud })), null))).code, String(aud)).toBe('invalid_token');
    }
  });

  it('audience "authenticated" only: accepted in accept mode, invalid_token in reject mode', async () => {
    const legacy = await tok({ aud: 'authenticated' });
    expect((await makeAuth({ audLegacyMode: 'accept' }).authenticate(bearer(legacy), null)).id).toBe(owner.id);
    const err = await rejection(makeAuth({ audLegacyMode: 'reject' }).authenticate(bearer(legacy), null));
    expect(err.code).toBe('invalid_token');
    expect(err.detail).toMatch(/authorize again/);
    // alongside a proper audience it is fine in reject mode
    const both = await tok({ aud: ['authenticated', MCP_AUD] });
    expect((await makeAuth({ audLegacyMode: 'reject' }).authenticate(bearer(both), null)).id).toBe(owner.id);
    // "authenticated" with some other audience is not the legacy case
    const mixed = await tok({ aud: ['authenticated', 'https://other.example'] });
    expect((await rejection(makeAuth({ audLegacyMode: 'accept' }).authenticate(bearer(mixed), null))).code).toBe('invalid_token');
  });

  it('wrong issuer -> invalid_token', async () => {
    const err = await rejection(makeAuth().authenticate(bearer(await tok({ iss: 'https://evil.example/' })), null));
    expect(err.code).toBe('invalid_token');
  });

  it('expired -> invalid_token', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    const err = await rejection(makeAuth().authenticate(bearer(await tok({ iat: past - 3600, exp: past })), null));
    expect(err.code).toBe('invalid_token');
    expect(err.detail).toMatch(/expired/);
  });

  it('a token signed with a key the IdP does not publish -> invalid_token', async () => {
    const err = await rejection(makeAuth().authenticate(bearer(await tok({ kid: 'stranger' })), null));
    expect(err.code).toBe('invalid_token');
  });

  it('a tampered token -> invalid_token', async () => {
    const t = await tok();
    const [h, , s] = t.split('.');
    const body = Buffer.from(JSON.stringify({ sub: owner.sub, aud: MCP_AUD, iss: idp.issuer, exp: 9999999999, client_id: 'app1', scope: 'pii:read' })).toString('base64url');
    expect((await rejection(makeAuth().authenticate(bearer(`${h}.${body}.${s}`), null))).code).toBe('invalid_token');
  });

  it('unknown or disabled subject -> invalid_token', async () => {
    const auth = makeAuth();
    expect((await rejection(auth.authenticate(bearer(await tok({ sub: 'nobody' })), null))).code).toBe('invalid_token');
    expect((await rejection(auth.authenticate(bearer(await tok({ sub: disabled.sub })), null))).code).toBe('invalid_token');
  });

  it('client id from client_id, else azp; neither -> invalid_token', async () => {
    const auth = makeAuth();
    const viaAzp = await idp.issueToken({ sub: owner.sub, aud: MCP_AUD, scope: 'tasks:read', azp: 'app1' });
    expect((await auth.authenticate(bearer(viaAzp), null)).oauthClientId).toBe('app1');
    const none = await idp.issueToken({ sub: owner.sub, aud: MCP_AUD, scope: 'tasks:read' });
    expect((await rejection(auth.authenticate(bearer(none), null))).code).toBe('invalid_token');
  });

  it('granted = the active grant narrowed by the token scopes it names; no live grant grants nothing', async () => {
    const auth = makeAuth();
    const p = await auth.authenticate(bearer(await tok({ scope: 'tasks:read crm:read audit:read' })), null);
    expect([...p.scopes]).toEqual(['tasks:read']);
    const noGrant = await auth.authenticate(bearer(await tok({ client_id: 'app-unknown', jti: 'jti-1' })), null);
    expect([...noGrant.scopes]).toEqual([]);
    expect(noGrant.credentialId).toBe('jti-1');
    const revoked = await auth.authenticate(bearer(await tok({ client_id: 'app-revoked' })), null);
    expect([...revoked.scopes]).toEqual([]);
    expect(revoked.credentialId).toMatch(/^tok_[0-9a-f]{16}$/);
  });

  it('a token with only sign-in scopes (openid email profile) gets the live grant ∩ the live role', async () => {
    const auth = makeAuth();
    const p = await auth.authenticate(bearer(await tok({ scope: 'openid email profile' })), null);
    expect([...p.scopes]).toEqual(['tasks:read', 'tasks:write', 'pii:read']);
    const noScope = await auth.authenticate(bearer(await tok({ scope: undefined })), null);
    expect([...noScope.scopes]).toEqual(['tasks:read', 'tasks:write', 'pii:read']);
    const admin = await auth.authenticate(bearer(await tok({ sub: clientAdmin.sub, scope: 'openid email profile' })), null);
    expect([...admin.scopes]).toEqual(['tasks:read']); // grant tasks:read crm:read pii:read ∩ memberships tasks:read, manager
    const viewerP = await auth.authenticate(bearer(await tok({ sub: viewer.sub, scope: 'openid' })), null);
    expect([...viewerP.scopes]).toEqual([]);
  });

  it('a token naming service scopes narrows the grant to them and never widens it', async () => {
    const auth = makeAuth();
    const p = await auth.authenticate(bearer(await tok({ scope: 'openid email tasks:read' })), null);
    expect([...p.scopes]).toEqual(['tasks:read']);
    const wider = await auth.authenticate(bearer(await tok({ scope: 'audit:read crm:write' })), null);
    expect([...wider.scopes]).toEqual([]);
  });

  it('a token issued before its grant was revoked is invalid_token; one issued after authenticates with no scope', async () => {
    const auth = makeAuth();
    const grant = await addGrant(database, { userId: owner.id, oauthClientId: 'app-rev-live', scopes: ['tasks:read'] });
    const nowS = Math.floor(Date.now() / 1000);
    const before = await tok({ client_id: 'app-rev-live', scope: 'openid', iat: nowS - 120 });
    expect([...(await auth.authenticate(bearer(before), null)).scopes]).toEqual(['tasks:read']);
    await database.db.update(oauthGrants).set({ revokedAt: new Date((nowS - 60) * 1000) }).where(eq(oauthGrants.id, grant));
    const err = await rejection(auth.authenticate(bearer(before), null));
    expect(err.code).toBe('invalid_token');
    const after = await tok({ client_id: 'app-rev-live', scope: 'openid', iat: nowS });
    const p = await auth.authenticate(bearer(after), null);
    expect([...p.scopes]).toEqual([]);
    // A fresh consent after the revocation: new tokens get it, the old one stays refused.
    await addGrant(database, { userId: owner.id, oauthClientId: 'app-rev-live', scopes: ['tasks:read', 'pii:read'] });
    expect([...(await auth.authenticate(bearer(after), null)).scopes]).toEqual(['tasks:read', 'pii:read']);
    expect((await rejection(auth.authenticate(bearer(before), null))).code).toBe('invalid_token');
  });

  it('viewer: granted pii:read never reaches it', async () => {
    const p = await makeAuth().authenticate(bearer(await tok({ sub: viewer.sub, scope: 'tasks:read pii:read' })), null);
    expect(p.kind).toBe('operator');
    expect(p.role).toBe('viewer');
    expect([...p.scopes]).toEqual([]);
  });

  it('client admin: membership role read as a scope label, nothing otherwise; client scope = active memberships', async () => {
    const p = await makeAuth().authenticate(
      bearer(await tok({ sub: clientAdmin.sub, scope: 'tasks:read crm:read pii:read' })),
      null,
    );
    expect(p.kind).toBe('client_admin');
    expect([...p.scopes]).toEqual(['tasks:read']); // crm:read only via a revoked membership; "manager" is no label
    expect(p.clientScope).toEqual({ all: false, clientIds: ['c1', 'c2'] });
    expect(p.role).toBe('manager,tasks:read');
  });

  describe('allowlist client mode', () => {
    it('no policy row, or a row not allowlisted -> invalid_token', async () => {
      const auth = makeAuth({ oauthClientMode: 'allowlist' });
      expect((await rejection(auth.authenticate(bearer(await tok({ client_id: 'app-norow' })), null))).code).toBe('invalid_token');
      expect((await rejection(auth.authenticate(bearer(await tok({ client_id: 'app-off' })), null))).code).toBe('invalid_token');
    });

    it('the scope ceiling bounds the grant', async () => {
      const auth = makeAuth({ oauthClientMode: 'allowlist' });
      const p = await auth.authenticate(bearer(await tok({ scope: 'tasks:read tasks:write pii:read' })), null);
      expect([...p.scopes]).toEqual(['tasks:read', 'pii:read']);
      const signIn = await auth.authenticate(bearer(await tok({ scope: 'openid email profile' })), null);
      expect([...signIn.scopes]).toEqual(['tasks:read', 'pii:read']);
      // open mode ignores the policy rows
      const q = await makeAuth({ oauthClientMode: 'open' }).authenticate(bearer(await tok({ client_id: 'app-norow', scope: 'tasks:read' })), null);
      expect([...q.scopes]).toEqual(['tasks:read']);
    });
  });

  describe('key set availability', () => {
    it('no JWKS URL or issuer configured -> not_configured with Retry-After 30', async () => {
      for (const overrides of [{ oauthJwksUrl: null }, { oauthIssuer: null }]) {
        const err = await rejection(makeAuth(overrides).authenticate(bearer(await tok()), null));
        expect(err.code).toBe('not_configured');
        expect(err.headers['Retry-After']).toBe('30');
      }
    });

    it('key endpoint failing with nothing cached -> not_configured with Retry-After 30', async () => {
      idp.setBehaviour('error500');
      const err = await rejection(makeAuth().authenticate(bearer(await tok()), null));
      expect(err.code).toBe('not_configured');
      expect(err.headers['Retry-After']).toBe('30');
    });

    it('a hanging key endpoint with nothing cached is abandoned -> not_configured', async () => {
      idp.setBehaviour('hang');
      const auth = makeAuth({}, new KeySetCache({ url: idp.jwksUrl, timeoutMs: 150 }));
      const err = await rejection(auth.authenticate(bearer(await tok()), null));
      expect(err.code).toBe('not_configured');
      expect(err.headers['Retry-After']).toBe('30');
    });

    it('100 concurrent unknown-kid tokens while the endpoint fails: one fetch, known keys still verify', async () => {
      let clock = Date.now();
      const jwks = new KeySetCache({ url: idp.jwksUrl, now: () => clock });
      const auth = makeAuth({}, jwks);
      await auth.authenticate(bearer(await tok()), null);
      idp.setBehaviour('error500');
      idp.resetFetchCount();
      clock += 31_000;
      const stranger = await tok({ kid: 'stranger-2' });
      const good = await tok();
      const results = await Promise.allSettled([
        ...Array.from({ length: 100 }, () => auth.authenticate(bearer(stranger), null)),
        ...Array.from({ length: 10 }, () => auth.authenticate(bearer(good), null)),
      ]);
      expect(idp.fetchCount()).toBe(1);
      expect(results.slice(0, 100).every((r) => r.status === 'rejected' && (r.reason as { code: string }).code === 'invalid_token')).toBe(true);
      expect(results.slice(100).every((r) => r.status === 'fulfilled')).toBe(true);
    });

    it('a cached set keeps serving while the endpoint fails', async () => {
      let clock = Date.now();
      const jwks = new KeySetCache({ url: idp.jwksUrl, now: () => clock });
      const auth = makeAuth({}, jwks);
      await auth.authenticate(bearer(await tok()), null);
      idp.setBehaviour('error500');
      clock += 11 * 60_000;
      for (let i = 0; i < 3; i++) expect((await auth.authenticate(bearer(await tok()), null)).id).toBe(owner.id);
    });
  });
});

describe('forged algorithms', () => {
  it('alg none and HS256 (keyed with the public key) -> invalid_token', async () => {
    const auth = makeAuth();
    const payload = {
      sub: owner.sub, aud: MCP_AUD, iss: idp.issuer, client_id: 'app1', scope: 'tasks:read',
      exp: Math.floor(Date.now() / 1000) + 600,
    };
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ alg: 'none', kid: 'rsa-1' })}.${b64(payload)}.`;
    expect((await rejection(auth.authenticate(bearer(none + 'x'), null))).code).toBe('invalid_token');
    const { createHmac } = await import('node:crypto');
    const signingInput = `${b64({ alg: 'HS256', kid: 'rsa-1' })}.${b64(payload)}`;
    const mac = createHmac('sha256', JSON.stringify(idp.signingKey().publicJwk)).update(signingInput).digest('base64url');
    expect((await rejection(auth.authenticate(bearer(`${signingInput}.${mac}`), null))).code).toBe('invalid_token');
  });
});
