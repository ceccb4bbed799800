// The developer portal (spec, cross-cutting rule 7) against the real server: which pages are public,
// which need a session or a bearer credential (a browser is redirected to sign-in with `next`, a
// program gets 401 unauthorized with sign_in and request_access), problem pages by Accept, the
// request-access form and the operators' list across principals, and a link check that crawls
// every portal page and document and finds no broken link.
import { service } from '../../generated/registry.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { rowCount } from './helpers.ts';

let s: TestServer;
let idp: TestIdp;
const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

const PUBLIC = ['/', '/operators', '/client-admins', '/docs', '/security', '/status', '/changelog', '/problems', '/problems/not_found', '/request-access', '/console/sign-in'];
const SIGNED_IN = ['/connect', '/docs/rest', '/docs/mcp', '/docs/oauth', '/docs/webhooks', '/docs/errors', '/reference', '/reference/tasks', '/openapi.json', '/llms-full.txt', '/agent-guide.md', '/search-index.json'];

async function token(sub: string): Promise<string> {
  return idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: 'openid email profile', client_id: s.credentials.oauthClientId });
}

async function signIn(key: string): Promise<string> {
  const res = await fetch(`${s.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...HTML },
    body: new URLSearchParams({ key, next: '/' }),
  });
  expect(res.status).toBe(303);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, app: { rateLimit: { limit: 100_000 } } });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
});

describe('access to portal pages', () => {
  it('public pages answer HTML without a credential, with the one stylesheet', async () => {
    for (const path of PUBLIC) {
      const res = await fetch(`${s.url}${path}`, { headers: HTML });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(await res.text(), path).toContain('<link rel="stylesheet" href="/portal.css">');
    }
    const css = await fetch(`${s.url}/portal.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    const sheet = await css.text();
    expect(sheet).toContain('prefers-color-scheme:dark');
    expect(sheet).toContain('@media (max-width:40rem)');
    const health = await fetch(`${s.url}/health`);
    expect(await health.json()).toMatchObject({ status: 'ok', contractVersion: service.contractVersion });
    const status = await fetch(`${s.url}/status`);
    expect(await status.json()).toMatchObject({ status: 'ok', database: 'ok' });
  });

  it('a browser without a session is redirected to sign-in carrying the page; a program gets 401 with sign_in and request_access', async () => {
    for (const path of SIGNED_IN) {
      const browser = await fetch(`${s.url}${path}?x=1`, { headers: HTML, redirect: 'manual' });
      expect(browser.status, path).toBe(302);
      expect(browser.headers.get('location'), path).toBe(`/console/sign-in?next=${encodeURIComponent(`${path}?x=1`)}`);
      const program = await fetch(`${s.url}${path}`);
      expect(program.status, path).toBe(401);
      expect(program.headers.get('content-type')).toBe('application/problem+json');
      const body = (await program.json()) as Record<string, string>;
      expect(body.code).toBe('unauthorized');
      expect(body.sign_in).toBe(`${s.config.baseUrl}/console/sign-in?next=${encodeURIComponent(path)}`);
      expect(body.request_access).toBe(`${s.config.baseUrl}/request-access`);
      const refused = await fetch(`${s.url}${path}`, { headers: { authorization: 'Bearer svc_sk_test_nope' } });
      expect(refused.status, path).toBe(401);
    }
  });

  it('every credential kind and a session open the signed-in pages', async () => {
    const cookie = await signIn(s.credentials.operatorKey);
    const credentials = {
      operatorKey: { authorization: `Bearer ${s.credentials.operatorKey}` },
      serviceKey: { authorization: `Bearer ${s.credentials.serviceKey}` },
      operatorToken: { authorization: `Bearer ${await token(s.credentials.operatorSub)}` },
      clientAdminToken: { authorization: `Bearer ${await token(s.credentials.clientAdminSub)}` },
      session: { cookie },
    };
    for (const [who, headers] of Object.entries(credentials))
      for (const path of SIGNED_IN) {
        const res = await fetch(`${s.url}${path}`, { headers: { ...headers, ...HTML } });
        expect(res.status, `${who} ${path}`).toBe(200);
        expect(res.headers.get('cache-control'), path).toBe('private, no-store');
      }
    const doc = (await (await fetch(`${s.url}/openapi.json`, { headers: { cookie } })).json()) as { servers: { url: string }[]; paths: object };
    expect(doc.servers[0]!.url).toBe(s.config.baseUrl);
    const index = (await (await fetch(`${s.url}/search-index.json`, { headers: { cookie } })).json()) as { entries: { kind: string }[] };
    expect(index.entries.filter((e) => e.kind === 'operation')).toHaveLength(82);
    const full = await (await fetch(`${s.url}/llms-full.txt`, { headers: { cookie } })).text();
    expect(full.match(/^### [a-z_]+\.[a-z_.]+$/gm)).toHaveLength(82);
  });
});

describe('problem pages by Accept', () => {
  it('HTML for a browser, Markdown or JSON for a program, 404 problem for an unknown code', async () => {
    const html = await fetch(`${s.url}/problems/not_configured`, { headers: HTML });
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.headers.get('vary')).toContain('Accept');
    expect(await html.text()).toContain('Retry-After: 30 s.');
    const md = await fetch(`${s.url}/problems/rate_limited`, { headers: { accept: 'text/markdown' } });
    expect(md.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(await md.text()).toMatch(/^# /);
    const json = await fetch(`${s.url}/problems/rate_limited`, { headers: { accept: 'application/json' } });
    expect(await json.json()).toMatchObject({ code: 'rate_limited', status: 429, retryable: true, type: `${s.config.baseUrl}/problems/rate_limited` });
    const list = (await (await fetch(`${s.url}/problems`)).json()) as { items: { code: string }[] };
    expect(list.items.map((p) => p.code)).toContain('unauthorized');
    const unknown = await fetch(`${s.url}/problems/nope`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('not_found');
  });
});

describe('request access', () => {
  it('stores a valid request; bad input is a problem with pointers and stores nothing', async () => {
    const before = await rowCount(s.database, 'access_requests');
    const ok = await fetch(`${s.url}/request-access`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada Example', email: 'ada@example.com', organisation: 'Acme', audience: 'client_admin', message: 'Our benefits portal' }),
    });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ status: 'pending' });
    expect(await rowCount(s.database, 'access_requests')).toBe(before + 1);

    const bad = await fetch(`${s.url}/request-access`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: ' ', email: 'not-an-email', organisation: 'x'.repeat(201), audience: 'king', message: 'a\u0000b' }),
    });
    expect(bad.status).toBe(422);
    const problem = (await bad.json()) as { code: string; errors: { pointer: string }[] };
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual(['/audience', '/email', '/message', '/name', '/organisation']);
    for (const [type, body, status] of [
      ['text/plain', 'hello', 415],
      ['application/json', '{"name":', 400],
      ['application/json', '[1]', 422],
    ] as const) {
      const res = await fetch(`${s.url}/request-access`, { method: 'POST', headers: { 'content-type': type }, body });
      expect(res.status, `${type} ${body}`).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
    expect(await rowCount(s.database, 'access_requests')).toBe(before + 1);

    const form = await fetch(`${s.url}/request-access`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...HTML },
      body: new URLSearchParams({ name: 'Grace <b>', email: 'grace@globex.example', organisation: 'Globex', audience: 'operator_scripts' }),
    });
    expect(form.status).toBe(201);
    const page = await form.text();
    expect(page).toContain('Grace &lt;b&gt;');
    expect(page).not.toContain('Grace <b>');
  });

  it('operators see the list; client admins, bound keys and anonymous callers do not', async () => {
    const operatorSession = await signIn(s.credentials.operatorKey);
    const callers: [string, Record<string, string>, number][] = [
      ['operator session', { cookie: operatorSession }, 200],
      ['operator key (unbound)', { authorization: `Bearer ${s.credentials.operatorKey}` }, 200],
      ['operator token (all clients)', { authorization: `Bearer ${await token(s.credentials.operatorSub)}` }, 200],
      ['scoped operator token', { authorization: `Bearer ${await token(s.credentials.scopedOperatorSub as string)}` }, 200],
      ['client admin token', { authorization: `Bearer ${await token(s.credentials.clientAdminSub)}` }, 403],
      ['bound key', { authorization: `Bearer ${s.credentials.serviceKey}` }, 403],
      ['nobody', {}, 401],
    ];
    for (const [who, headers, status] of callers) {
      const res = await fetch(`${s.url}/console/access-requests`, { headers });
      expect(res.status, who).toBe(status);
      if (status === 200) {
        const { items } = (await res.json()) as { items: { email: string }[] };
        expect(items.map((i) => i.email), who).toContain('ada@example.com');
      } else expect(JSON.stringify(await res.json()), who).not.toContain('ada@example.com');
    }
  });
});

describe('link check', () => {
  it('every link of every portal page and document answers 200 (with a session or a credential where one is needed)', async () => {
    const cookie = await signIn(s.credentials.operatorKey);
    const key = s.credentials.operatorKey;
    const start = ['/', '/llms.txt', '/llms-full.txt', '/docs', '/reference', '/agent-guide.md', '/v1/docs', '/changelog', '/problems', ...SIGNED_IN, ...PUBLIC];
    const queue = [...new Set(start)];
    const seen = new Set<string>();
    const pages = new Map<string, string>();
    const broken: string[] = [];
    const outside: string[] = [];
    const fragments: [string, string, string][] = [];
    while (queue.length) {
      const target = queue.shift()!;
      if (seen.has(target)) continue;
      seen.add(target);
      let res: Response;
      if (target === '/mcp' || target.startsWith('/mcp?')) {
        // The MCP endpoint (either mode, /mcp?mode=dynamic too) is POST-only: initialize must succeed with the credential.
        res = await fetch(`${s.url}${target}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'link-check', version: '1' } } }),
        });
        if (res.status !== 200) broken.push(`${target}: ${res.status}`);
        continue;
      }
      const headers: Record<string, string> = { ...HTML, cookie };
      // The /v1 documents take a bearer credential (the portal's take the session).
      if (target.startsWith('/v1/')) headers.authorization = `Bearer ${key}`;
      res = await fetch(`${s.url}${target}`, { headers, redirect: 'manual' });
      if (res.status !== 200) {
        broken.push(`${target}: ${res.status}`);
        continue;
      }
      const type = res.headers.get('content-type') ?? '';
      if (!/text\/(html|markdown|plain)/.test(type)) continue;
      const body = await res.text();
      pages.set(target, body);
      const links = type.includes('html')
        ? [...body.matchAll(/\s(?:href|src)="([^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'))
        : [...body.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
      for (const link of links) {
        if (link.startsWith('data:')) continue;
        const url = new URL(link, `${s.url}${target}`);
        if (url.origin !== new URL(s.url).origin) {
          outside.push(`${target} -> ${link}`);
          continue;
        }
        const path = url.pathname + url.search;
        if (url.hash && type.includes('html')) fragments.push([target, path, url.hash.slice(1)]);
        if (!seen.has(path)) queue.push(path);
      }
    }
    expect(broken).toEqual([]);
    expect(outside).toEqual([]);
    // Every in-page anchor exists on the page it points to.
    const missing = fragments.filter(([, path, id]) => !pages.get(path)?.includes(`id="${id}"`)).map(([from, path, id]) => `${from} -> ${path}#${id}`);
    expect(missing).toEqual([]);
    // The crawl reached every family's reference page and every guide.
    expect([...seen].filter((p) => p.startsWith('/reference/'))).toHaveLength(23);
    expect([...seen].filter((p) => /^\/docs\/[a-z]+$/.test(p))).toHaveLength(5);
    expect([...seen].filter((p) => /^\/v1\/reference\/[a-z_]+\.md$/.test(p))).toHaveLength(23);
  }, 120_000);
});
