// Portal sign-in end to end.
// With an identity provider: a real OpenID Provider (oidc-provider, a certified implementation) on
// loopback, whose login and consent interactions this test answers for a chosen subject. The flow:
// redirect with PKCE, login, consent, callback, the session cookie's flags, sign-out, an expired
// session, a disabled user, an unknown subject, a tampered state and a replayed callback refused.
// Without one (the demo): API-key sign-in in a POST form, `next` kept only as a relative path, and
// the session ends with its key.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

const HTML = { accept: 'text/html' };

/** Cookies of one origin, by name (paths ignored: both servers are ours). */
class Jar {
  private cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

async function get(url: string, jar: Jar, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header(), ...headers } });
  jar.take(res);
  return res;
}

describe('sign-in through an OpenID Connect provider', () => {
  let s: TestServer;
  let idpServer: Server;
  let provider: Provider;
  let issuer: string;
  /** The subject the provider's login interaction signs in next. */
  let nextSubject = '';
  let consents = 0;

  beforeAll(async () => {
    let handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, r) => r.end();
    idpServer = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => idpServer.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(idpServer.address() as AddressInfo).port}`;
    s = await startTestServer({ app: { portalOidc: { issuer, clientId: 'svc-portal', clientSecret: 'portal-secret-for-tests' } } });
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    provider = new Provider(issuer, {
      jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'portal-test', alg: 'RS256', use: 'sig' } as never] },
      clients: [
        {
          client_id: 'svc-portal',
          client_secret: 'portal-secret-for-tests',
          redirect_uris: [`${s.config.baseUrl}/console/callback`],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      pkce: { required: () => true },
      cookies: { keys: ['oidc-provider-test-cookie-key'] },
      features: { devInteractions: { enabled: false } },
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, email: `${sub}@example.test` }) }),
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    });
    const callback = provider.callback();
    // The login and consent screens: this test answers them for nextSubject.
    handler = (req, res) => {
      if (!req.url?.startsWith('/interaction/')) return callback(req, res);
      void (async () => {
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name === 'login') {
          await provider.interactionFinished(req, res, { login: { accountId: nextSubject } }, { mergeWithLastSubmission: false });
          return;
        }
        consents++;
        const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
        grant.addOIDCScope(String(details.params.scope));
        await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
      })().catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    };
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await new Promise((resolve) => idpServer?.close(resolve));
  });

  /** From a signed-in page to the callback: returns the svc jar and the callback URL (not yet followed). */
  async function toCallback(sub: string, page: string): Promise<{ jar: Jar; callback: URL; authorize: URL }> {
    nextSubject = sub;
    const jar = new Jar();
    const idpJar = new Jar();
    const first = await get(`${s.url}${page}`, jar, HTML);
    expect(first.status).toBe(302);
    const signInPath = first.headers.get('location')!;
    expect(signInPath).toBe(`/console/sign-in?next=${encodeURIComponent(page)}`);
    const signIn = await get(`${s.url}${signInPath}`, jar, HTML);
    const start = /href="(\/console\/sign-in\/start\?[^"]+)"/.exec(await signIn.text())![1]!.replaceAll('&amp;', '&');
    const toIdp = await get(`${s.url}${start}`, jar);
    expect(toIdp.status).toBe(302);
    const authorize = new URL(toIdp.headers.get('location')!);
    let location = authorize.href;
    for (let hops = 0; hops < 10 && location.startsWith(issuer); hops++) {
      const res = await get(location, idpJar);
      expect([302, 303], location).toContain(res.status);
      location = new URL(res.headers.get('location')!, location).href;
    }
    expect(location.startsWith(`${s.config.baseUrl}/console/callback?`)).toBe(true);
    return { jar, callback: new URL(location), authorize };
  }

  async function signIn(sub: string, page = '/docs/rest'): Promise<{ jar: Jar; res: Response }> {
    const { jar, callback } = await toCallback(sub, page);
    const res = await get(`${s.url}${callback.pathname}${callback.search}`, jar, HTML);
    return { jar, res };
  }

  it('redirect with PKCE, login, consent, callback, a session cookie with the right flags, back to the page, sign-out', async () => {
    const consentsBefore = consents;
    const { jar, callback, authorize } = await toCallback(s.credentials.operatorSub as string, '/docs/rest');
    expect(authorize.origin).toBe(issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('scope')).toBe('openid email profile');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${s.config.baseUrl}/console/callback`);
    expect(consents).toBe(consentsBefore + 1);

    const back = await fetch(`${s.url}${callback.pathname}${callback.search}`, { redirect: 'manual', headers: { cookie: jar.header(), ...HTML } });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe('/docs/rest');
    const setCookie = back.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; Secure/);
    expect(setCookie).toMatch(/; SameSite=Lax/);
    expect(setCookie).toMatch(/; Path=\//);
    jar.take(back);
    const secret = jar.get('svc_session')!;
    const [row] = await s.database.execute<{ secret_hash: string; login_method: string; user_id: string }>('select secret_hash, login_method, user_id from portal_sessions');
    expect(row).toMatchObject({ login_method: 'oidc', user_id: s.credentials.operatorUserId });
    expect(row!.secret_hash).not.toBe(secret); // only a hash is stored

    const pageRes = await get(`${s.url}/docs/rest`, jar, HTML);
    expect(pageRes.status).toBe(200);
    expect(await pageRes.text()).toContain('Sign out');

    const out = await fetch(`${s.url}/console/sign-out`, { method: 'POST', redirect: 'manual', headers: { cookie: jar.header() } });
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie().some((c) => c.startsWith('svc_session=;') || /svc_session=.*Max-Age=0/.test(c))).toBe(true);
    // The old cookie no longer opens anything: the session ended server-side.
    const after = await fetch(`${s.url}/docs/rest`, { redirect: 'manual', headers: { cookie: `svc_session=${secret}`, ...HTML } });
    expect(after.status).toBe(302);
  });

  it('a tampered state is refused and starts no session; a callback cannot be replayed', async () => {
    const { jar, callback } = await toCallback(s.credentials.operatorSub as string, '/reference');
    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    const refused = await fetch(`${s.url}${tampered.pathname}${tampered.search}`, { redirect: 'manual', headers: { cookie: jar.header() } });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('unauthorized');
    expect(refused.headers.getSetCookie().some((c) => c.startsWith('svc_session=') && !c.startsWith('svc_session=;'))).toBe(false);
    // The pending sign-in was used up by the refused attempt: the genuine callback is refused too.
    const replay = await fetch(`${s.url}${callback.pathname}${callback.search}`, { redirect: 'manual', headers: { cookie: jar.header() } });
    expect(replay.status).toBe(401);
    // A callback from another browser (no sign-in cookie) is refused.
    const { callback: other } = await toCallback(s.credentials.operatorSub as string, '/reference');
    const stranger = await fetch(`${s.url}${other.pathname}${other.search}`, { redirect: 'manual' });
    expect(stranger.status).toBe(401);
  });

  it('an expired session and a disabled user end the session; an unknown subject gets no session', async () => {
    const { jar, res } = await signIn(s.credentials.clientAdminSub as string, '/connect');
    expect(res.status).toBe(303);
    expect((await get(`${s.url}/connect`, jar, HTML)).status).toBe(200);
    await s.database.execute(`update portal_sessions set expires_at = now() - interval '1 second' where user_id = '${s.credentials.clientAdminUserId}'`);
    expect((await get(`${s.url}/connect`, jar, HTML)).status).toBe(302);
    const program = await fetch(`${s.url}/connect`, { headers: { cookie: jar.header() } });
    expect(program.status).toBe(401);

    const viewer = await signIn(s.credentials.viewerSub as string, '/connect');
    expect((await get(`${s.url}/connect`, viewer.jar, HTML)).status).toBe(200);
    await s.database.execute(`update users set disabled_at = now() where id = '${s.credentials.viewerUserId}'`);
    expect((await get(`${s.url}/connect`, viewer.jar, HTML)).status).toBe(302);

    const unknown = await signIn('nobody-we-know', '/connect');
    expect(unknown.res.status).toBe(403);
    expect(unknown.jar.get('svc_session')).toBeUndefined();
  });

  it('the API-key form is not offered when an identity provider is configured', async () => {
    const page = await (await fetch(`${s.url}/console/sign-in`, { headers: HTML })).text();
    expect(page).not.toContain('name="key"');
    const post = await fetch(`${s.url}/console/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: s.credentials.operatorKey }),
    });
    expect(post.status).toBe(405);
    expect(post.headers.getSetCookie()).toEqual([]);
  });
});

describe('sign-in with an API key (no identity provider: the demo)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ app: { portalOidc: null } });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  async function post(body: Record<string, string>): Promise<Response> {
    return fetch(`${s.url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...HTML },
      body: new URLSearchParams(body),
    });
  }

  it('the key goes in a POST body; the session cookie has the flags; next is kept only as a relative path', async () => {
    const page = await (await fetch(`${s.url}/console/sign-in?next=%2Fdocs%2Fmcp`, { headers: HTML })).text();
    expect(page).toContain('<form class="stack" method="post" action="/console/sign-in">');
    expect(page).toContain('name="next" value="/docs/mcp"');
    const ok = await post({ key: s.credentials.operatorKey, next: '/docs/mcp?tab=1#cursor' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/docs/mcp?tab=1#cursor');
    const cookie = ok.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    for (const flag of ['HttpOnly', 'Secure', 'SameSite=Lax', 'Path=/']) expect(cookie).toContain(`; ${flag}`);
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)', '/%0d%0aSet-Cookie:x', ' /docs']) {
      const res = await post({ key: s.credentials.operatorKey, next });
      expect(res.status, next).toBe(303);
      const location = res.headers.get('location')!;
      expect(location.startsWith('/') && !location.startsWith('//') && !location.includes('evil'), `${next} -> ${location}`).toBe(true);
    }
    // And the sign-in page never echoes a foreign next into its form.
    const foreign = await (await fetch(`${s.url}/console/sign-in?next=${encodeURIComponent('//evil.example')}`, { headers: HTML })).text();
    expect(foreign).toContain('name="next" value="/"');
  });

  it('a wrong, bound or OAuth credential starts no session; the session ends when its key is revoked', async () => {
    for (const key of ['', 'svc_sk_test_wrong', s.credentials.serviceKey, 'eyJhbGciOiJSUzI1NiJ9.e30.x']) {
      const res = await post({ key });
      expect(res.status, key).toBe(401);
      expect(res.headers.getSetCookie().some((c) => c.startsWith('svc_session=')), key).toBe(false);
    }
    const program = await fetch(`${s.url}/console/sign-in`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'key=svc_sk_test_wrong' });
    expect(program.status).toBe(401);
    expect(((await program.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer).toBe('/key');
    const json = await fetch(`${s.url}/console/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: s.credentials.operatorKey }) });
    expect(json.status).toBe(415);

    const ok = await post({ key: s.credentials.operatorKey, next: '/reference' });
    const cookie = ok.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
    expect((await fetch(`${s.url}/reference`, { redirect: 'manual', headers: { cookie, ...HTML } })).status).toBe(200);
    await s.database.execute(`update api_keys set revoked_at = now() where id = '${s.credentials.operatorKeyId}'`);
    expect((await fetch(`${s.url}/reference`, { redirect: 'manual', headers: { cookie, ...HTML } })).status).toBe(302);
  });
});
