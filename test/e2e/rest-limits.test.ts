// Rate limit over real HTTP (per credential, 429 rate_limited with Retry-After and the headers of
// the refusing window) and the audit of calls refused before the pipeline, on REST and /mcp.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { missingHeaders } from './helpers.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ app: { rateLimit: { limit: 3 } } });
});
afterAll(async () => {
  await s?.close();
});

it('429 rate_limited per credential, with Retry-After and the rate-limit headers; other credentials unaffected', async () => {
  const get = (key: string) => fetch(`${s.url}/v1/meta`, { headers: { authorization: `Bearer ${key}` } });
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) remaining.push((await get(s.credentials.operatorKey)).headers.get('x-ratelimit-remaining')!);
  expect(remaining).toEqual(['2', '1', '0']);
  const refused = await get(s.credentials.operatorKey);
  expect(refused.status).toBe(429);
  expect(missingHeaders(refused)).toEqual([]);
  expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
  expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(Number(refused.headers.get('x-ratelimit-reset'))).toBeCloseTo(Math.ceil(Date.now() / 1000) + retryAfter, -1);
  expect(await refused.json()).toMatchObject({ code: 'rate_limited', status: 429, retryable: true });
  expect((await get(s.credentials.serviceKey)).status).toBe(200);

  const mcp = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(mcp.status).toBe(429);
  expect(mcp.headers.get('ratelimit')).toMatch(/r=0/);
});

it('audits calls refused before the pipeline, REST and MCP alike', async () => {
  const rest = await fetch(`${s.url}/v1/tasks`);
  const mcp = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(rest.status).toBe(401);
  expect(mcp.status).toBe(401);
  await s.flushAudit();
  const rows = await s.database.execute<Record<string, unknown>>('select * from audit_log');
  const byRequest = (res: Response) => rows.find((r) => r.request_id === res.headers.get('x-request-id'));
  expect(byRequest(rest)).toMatchObject({ transport: 'rest', operation_id: 'tasks.list', status: 401, outcome: 'error', problem_code: 'unauthorized', principal_id: null });
  expect(byRequest(mcp)).toMatchObject({ transport: 'mcp', path: '/mcp', status: 401, outcome: 'error', problem_code: 'unauthorized' });
  expect(rows.some((r) => r.problem_code === 'rate_limited' && r.transport === 'rest')).toBe(true);
  expect(rows.some((r) => r.problem_code === 'rate_limited' && r.transport === 'mcp')).toBe(true);
});

it('SVC_RATE_LIMIT_PER_MINUTE sets the per-credential limit (default: the contract limit); a bad value refuses to start', async () => {
  const { loadConfig } = await import('../../runtime/config.ts');
  expect(loadConfig({}).rateLimitPerMinute).toBeNull();
  expect(loadConfig({ SVC_RATE_LIMIT_PER_MINUTE: '1200' }).rateLimitPerMinute).toBe(1200);
  for (const bad of ['0', '-5', '1.5', 'many']) {
    expect(() => loadConfig({ SVC_RATE_LIMIT_PER_MINUTE: bad })).toThrow(/SVC_RATE_LIMIT_PER_MINUTE must be a whole number/);
  }
  const { service } = await import('../../generated/registry.ts');
  const byDefault = await fetch(`${s.url}/v1/meta`, { headers: { authorization: `Bearer ${s.credentials.serviceKey}` } });
  expect(byDefault.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');

  const configured = await startTestServer({ rateLimitPerMinute: 2 });
  try {
    const get = () => fetch(`${configured.url}/v1/meta`, { headers: { authorization: `Bearer ${configured.credentials.operatorKey}` } });
    const first = await get();
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
  } finally {
    await configured.close();
  }
  const plain = await startTestServer();
  try {
    const res = await fetch(`${plain.url}/v1/meta`, { headers: { authorization: `Bearer ${plain.credentials.operatorKey}` } });
    expect(res.headers.get('ratelimit-policy')).toBe(`"default";q=${service.limits.rateLimitPerMinute};w=60`);
  } finally {
    await plain.close();
  }
});
