// REST over real HTTP: headers on every response, trace context, routing of custom methods,
// 404/405, published documents, authentication failures, validation and body problems.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { get as httpGet } from 'node:http';
import { api, missingHeaders, RATE_HEADERS, type Api } from './helpers.ts';
import { postChunked } from '../support/chunked.ts';
import { service } from '../../generated/registry.ts';

let s: TestServer;
let op: Api;
const uuid = () => crypto.randomUUID();

beforeAll(async () => {
  s = await startTestServer();
  op = api(s.url, s.credentials.operatorKey);
});
afterAll(async () => {
  await s?.close();
});

function raw(path: string, init: RequestInit & { key?: string | null } = {}) {
  const headers = new Headers(init.headers);
  const key = init.key === undefined ? s.credentials.operatorKey : init.key;
  if (key) headers.set('authorization', `Bearer ${key}`);
  return fetch(`${s.url}${path}`, { ...init, headers });
}

describe('headers on every response', () => {
  it.each([
    ['GET', '/v1/meta', true, 200],
    ['GET', '/v1/meta', false, 401],
    ['GET', '/nowhere', false, 404],
    ['GET', '/v1/nowhere', true, 404],
    ['DELETE', '/v1/meta', true, 405],
    ['GET', '/llms.txt', false, 200],
    ['GET', '/v1/health', false, 200],
    ['GET', '/.well-known/oauth-protected-resource', false, 200],
    ['GET', '/problems/not_found', false, 200],
    ['POST', '/mcp', false, 401],
  ])('%s %s (credential %s) -> %i with every header', async (method, path, withKey, status) => {
    const res = await raw(path, { method, key: withKey ? undefined : null });
    expect(res.status).toBe(status);
    expect(missingHeaders(res)).toEqual([]);
    expect(res.headers.get('x-svc-api-version')).toBe(service.apiVersion);
    expect(res.headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
    expect(res.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('600');
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    if (status >= 400) {
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const body = await res.json();
      expect(body).toMatchObject({ status, instance: path, requestId: res.headers.get('x-request-id') });
      expect(body.type).toBe(`${s.config.baseUrl}/problems/${body.code}`);
      expect(typeof body.title).toBe('string');
      expect(typeof body.detail).toBe('string');
      expect(typeof body.retryable).toBe('boolean');
    }
  });
  it('sends each header once on the wire, on the plain-object path (a read, an ETag) and the problem path alike', async () => {
    const names = (path: string) =>
      new Promise<{ status: number; names: string[] }>((resolve, reject) => {
        httpGet(`${s.url}${path}`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, names: res.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()) }));
        }).on('error', reject);
      });
    const { data } = await op.GET('/v1/tasks', { params: { query: { pageSize: 1 } } });
    const wanted = ['content-type', 'x-request-id', 'traceparent', 'x-svc-api-version', ...RATE_HEADERS];
    for (const [path, status] of [['/v1/meta', 200], [`/v1/tasks/${data!.items[0]!.id}`, 200], ['/v1/tasks/tsk_nope', 404]] as const) {
      const got = await names(path);
      expect(got.status, path).toBe(status);
      expect(got.names.filter((n, i) => got.names.indexOf(n) !== i), path).toEqual([]);
      expect(got.names, path).toEqual(expect.arrayContaining(wanted));
      if (status === 200 && path.startsWith('/v1/tasks/')) expect(got.names).toContain('etag');
    }
  });
  it('counts an authenticated credential in its own window', async () => {
    const a = await raw('/v1/meta');
    const b = await raw('/v1/meta');
    expect(Number(b.headers.get('x-ratelimit-remaining'))).toBe(Number(a.headers.get('x-ratelimit-remaining')) - 1);
  });
});

describe('trace context and request id', () => {
  it('propagates a valid traceparent and keeps a caller request id', async () => {
    const res = await raw('/v1/meta', { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'x-request-id': 'my-req-1' } });
    expect(res.headers.get('traceparent')).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(res.headers.get('traceparent')).not.toContain('00f067aa0ba902b7');
    expect(res.headers.get('x-request-id')).toBe('my-req-1');
  });
  it.each(['00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'junk'])(
    'starts a new trace for an invalid traceparent %s',
    async (tp) => {
      const res = await raw('/v1/meta', { headers: { traceparent: tp } });
      const out = res.headers.get('traceparent')!;
      expect(out).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(out).not.toContain('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(out.slice(3, 35)).not.toBe('0'.repeat(32));
    },
  );
});

describe('routing', () => {
  it('the plain endpoint path never reaches the :test action, and two verbs on one resource reach their own handlers', async () => {
    const plain = await raw('/v1/webhook-endpoints/abc', { method: 'POST' });
    expect(plain.status).toBe(405);
    expect(plain.headers.get('allow')).toBeTruthy();
    const task = s.credentials.taskId as string;
    const completed = await raw(`/v1/tasks/${task}:complete`, { method: 'POST' });
    expect(completed.status).toBe(200);
    expect((await completed.json()).result.status).toBe('done');
    const keyA = await raw(`/v1/api-keys/key_nope:revoke`, { method: 'POST' });
    const keyB = await raw(`/v1/api-keys/key_nope:rotate`, { method: 'POST', headers: { 'idempotency-key': uuid() } });
    // Each verb reaches its own operation (the audit names it), whatever the handler answers.
    await s.flushAudit();
    const ops = await s.database.execute<{ operation_id: string; request_id: string }>(`select operation_id, request_id from audit_log`);
    expect(ops.find((r) => r.request_id === keyA.headers.get('x-request-id'))?.operation_id).toBe('keys.revoke');
    expect(ops.find((r) => r.request_id === keyB.headers.get('x-request-id'))?.operation_id).toBe('keys.rotate');
    expect((await raw(`/v1/tasks/${task}/~complete`, { method: 'POST' })).status).toBe(404);
    expect((await raw(`/v1/tasks/${task}:nonsense`, { method: 'POST' })).status).toBe(404);
  });
  it('an encoded colon (%3A) is part of the id, not a verb separator', async () => {
    const res = await raw(`/v1/tasks/${s.credentials.taskId}%3Acomplete`, { method: 'POST' });
    expect(res.status).toBe(405); // the task resource has no POST
    const get = await raw(`/v1/tasks/${s.credentials.taskId}%3Acomplete`);
    expect(get.status).toBe(422);
    expect((await get.json()).errors[0].pointer).toBe('/task_id');
  });
  it('wrong method -> 405 with Allow', async () => {
    const res = await raw('/v1/tasks', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST');
  });
});

describe('published documents', () => {
  it('openapi.json and agent-guide.md need a bearer credential (no scope)', async () => {
    for (const path of ['/v1/openapi.json', '/v1/agent-guide.md']) {
      const anon = await raw(path, { key: null });
      expect(anon.status).toBe(401);
      const body = await anon.json();
      expect(body.code).toBe('unauthorized');
      expect(body.sign_in).toContain('/console/sign-in');
      expect(body.request_access).toBeTruthy();
      expect((await raw(path, { key: s.credentials.serviceKey })).status).toBe(200);
    }
    const doc = await (await raw('/v1/openapi.json')).json();
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(doc.servers[0].url).toBe(s.config.baseUrl);
    expect((await raw('/v1/agent-guide.md')).headers.get('content-type')).toContain('text/markdown');
  });
  it('llms.txt and health are public', async () => {
    const llms = await raw('/llms.txt', { key: null });
    expect(llms.status).toBe(200);
    expect(llms.headers.get('content-type')).toContain('text/plain');
    const health = await raw('/v1/health', { key: null });
    expect(await health.json()).toMatchObject({ status: 'ok' });
  });
  it('every reference page that llms.txt links to is served (with a credential); the changelog is public', async () => {
    const llms = await (await raw('/llms.txt', { key: null })).text();
    const links = [...llms.matchAll(/\]\((\/v1\/reference\/[a-z_]+\.md)\)/g)].map((m) => m[1]);
    expect(links).toHaveLength(23);
    for (const link of links) {
      expect((await raw(link, { key: null })).status).toBe(401);
      const page = await raw(link);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/markdown');
    }
    const changelog = await raw('/changelog', { key: null });
    expect(changelog.status).toBe(200);
    expect(await changelog.text()).toMatch(/## 1\.0\.0/);
  });
  it('protected-resource metadata, both variants', async () => {
    const root = await (await raw('/.well-known/oauth-protected-resource', { key: null })).json();
    const mcp = await (await raw('/.well-known/oauth-protected-resource/mcp', { key: null })).json();
    expect(root.resource).toBe(s.config.baseUrl);
    expect(mcp.resource).toBe(`${s.config.baseUrl}/mcp`);
    for (const m of [root, mcp]) {
      expect(m.scopes_supported).toEqual(['openid', 'email', 'profile', 'offline_access']);
      expect(m.svc_scopes_supported).toHaveLength(32);
      expect(m.svc_scopes_supported[0]).toBe('clients:read');
      expect(m.svc_scopes_supported[31]).toBe('audit:read');
      expect(m.bearer_methods_supported).toEqual(['header']);
      expect(Array.isArray(m.authorization_servers)).toBe(true);
    }
  });
  it('a public page per problem code', async () => {
    const page = await raw('/problems/idempotency_key_required', { key: null });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('An idempotency key is required');
    expect((await raw('/problems/nope', { key: null })).status).toBe(404);
  });
});

describe('authentication failures', () => {
  it('401 unauthorized without a credential, with the resource_metadata challenge', async () => {
    const res = await raw('/v1/tasks', { key: null });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${s.config.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
  });
  it('401 invalid_token for an unknown key; a credential in the URL is refused', async () => {
    const res = await raw('/v1/tasks', { key: 'svc_sk_test_notarealkeynotarealkeynotarealkey12345' });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('invalid_token');
    const inUrl = await raw(`/v1/tasks?api_key=${s.credentials.operatorKey}`, { key: null });
    expect(inUrl.status).toBe(401);
  });
});

describe('input problems', () => {
  it('validation_failed lists every failing field with a pointer; unknown fields are refused', async () => {
    const res = await raw('/v1/tasks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': uuid() },
      body: JSON.stringify({ title: '', priority: 'whenever', assigneeIds: ['ok', 'bad id'], surprise: true }),
    });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.code).toBe('validation_failed');
    const pointers = body.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/title', '/priority', '/assigneeIds/1', '/surprise']));
  });
  it('coerces query parameters and refuses bad ones', async () => {
    const { data, response } = await op.GET('/v1/tasks', { params: { query: { pageSize: 2 } } });
    expect(response.status).toBe(200);
    expect(data!.items.length).toBeLessThanOrEqual(2);
    const bad = await raw('/v1/tasks?pageSize=lots');
    expect(bad.status).toBe(422);
    expect((await bad.json()).errors[0].pointer).toBe('/pageSize');
    const unknown = await raw('/v1/tasks?color=red');
    expect((await unknown.json()).errors[0].pointer).toBe('/color');
  });
  it('413 over 1 MiB, 415 for a non-JSON body, 400 malformed_json — never a 500', async () => {
    const big = await raw('/v1/tasks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': uuid() },
      body: JSON.stringify({ title: 'x', description: 'y'.repeat(1_100_000) }),
    });
    expect(big.status).toBe(413);
    expect((await big.json()).code).toBe('payload_too_large');
    const form = await raw('/v1/tasks', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'title=x' });
    expect(form.status).toBe(415);
    expect((await form.json()).code).toBe('unsupported_media_type');
    const broken = await raw('/v1/tasks', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': uuid() }, body: '{"title":' });
    expect(broken.status).toBe(400);
    expect((await broken.json()).code).toBe('malformed_json');
    for (const body of ['null', '"x"', '[]', '{"title": {"$gt": 1}}']) {
      const res = await raw('/v1/tasks', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': uuid() }, body });
      expect(res.status, body).toBeLessThan(500);
    }
    expect(s.logs.filter((l) => l.includes('unexpected'))).toEqual([]);
  });
  it('413 for a chunked body that passes 1 MiB with no Content-Length, and the server keeps serving', async () => {
    const headers = { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': uuid() };
    const pad = 'y'.repeat(64 * 1024);
    const big = await postChunked(`${s.url}/v1/tasks`, headers, ['{"title":"x","description":"', ...Array.from({ length: 20 }, () => pad), '"}']);
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body).code).toBe('payload_too_large');
    // A chunked body within the limit is read whole: the field in its last chunk is the one refused.
    const small = await postChunked(`${s.url}/v1/tasks`, { ...headers, 'idempotency-key': uuid() }, ['{"title":', '"chunked",', '"surprise":1}']);
    expect(small.status).toBe(422);
    expect(JSON.parse(small.body).errors.map((e: { pointer: string }) => e.pointer)).toContain('/surprise');
    expect((await raw('/v1/meta')).status).toBe(200);
  });
});
