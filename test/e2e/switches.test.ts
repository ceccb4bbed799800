// The write switch and the feature flags come before audience and scope (issue 7 items 6, 7), the
// /mcp transport rules (item 11: Origin, unknown tool) and JSON-RPC error codes (issue 17 items 6,
// 8-batch, 9: -32600, -32602, each tools/call of a batch counted against the rate limit).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationsById } from '../../generated/registry.ts';
import { connectMcp, toolError, type McpSession } from '../mcp/support.ts';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { tableCounts, WRITE_TABLES } from './helpers.ts';

let idp: TestIdp;
/** Writes, webhooks and the event stream switched off; MCP on. */
let off: TestServer;
/** MCP switched off; everything else on. */
let noMcp: TestServer;

beforeAll(async () => {
  idp = await startIdp();
  const oauth = { oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl };
  off = await startTestServer({ ...oauth, writesEnabled: false, webhooksEnabled: false, eventStreamEnabled: false, allowedOrigins: ['https://console.example'] });
  noMcp = await startTestServer({ mcpEnabled: false });
}, 60_000);
afterAll(async () => {
  await off?.close();
  await noMcp?.close();
  await idp?.close();
});

/** An OAuth token of the seeded operator narrowed to one read scope. */
function readOnlyToken(s: TestServer): Promise<string> {
  return idp.issueToken({ sub: s.credentials.operatorSub, aud: `${s.config.baseUrl}/mcp`, scope: 'tasks:read', client_id: s.credentials.oauthClientId });
}

function call(s: TestServer, path: string, init: { method?: string; credential?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  return fetch(`${s.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${init.credential ?? s.credentials.operatorKey}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  });
}

async function rpc(s: TestServer, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await call(s, '/mcp', {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}

describe('the write switch comes first', () => {
  it('a caller without the scope gets 404 on a command, not 403, and nothing is written (REST and MCP)', async () => {
    const token = await readOnlyToken(off);
    const before = await tableCounts(off.database, WRITE_TABLES);
    const res = await call(off, '/v1/tasks', { method: 'POST', credential: token, body: { title: 'x', clientId: off.credentials.clientId }, headers: { 'idempotency-key': randomUUID() } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found', detail: expect.stringContaining('API_WRITES_ENABLED') });
    // The same for a command outside the caller's audience and for a read-only key's MCP call.
    const m = await connectMcp(off.url, token);
    try {
      expect(toolError(await m.call('svc.tasks.create', { title: 'x', clientId: off.credentials.clientId, idempotencyKey: randomUUID() }))).toMatchObject({ code: 'not_found', status: 404 });
    } finally {
      await m.close();
    }
    expect(await tableCounts(off.database, WRITE_TABLES)).toEqual(before);
  });

  it('tools/list lists no command tool, for any caller', async () => {
    for (const credential of [off.credentials.operatorKey, off.credentials.serviceKey]) {
      const m = await connectMcp(off.url, credential, { list: false });
      try {
        const names = (await m.client.listTools()).tools.map((t) => t.name);
        expect(names.length).toBeGreaterThan(10);
        const commands = Object.values(operationsById).filter((op) => op.kind === 'command' && op.mcp && names.includes(op.mcp.name));
        expect(commands.map((op) => op.id)).toEqual([]);
        expect(names).toContain('svc.tasks.list');
      } finally {
        await m.close();
      }
    }
  });
});

describe('feature flags', () => {
  it('API_WEBHOOKS_ENABLED off: every webhooks operation is 404 not_found (on: it is served)', async () => {
    const webhookOps = Object.values(operationsById).filter((op) => op.family === 'webhooks');
    expect(webhookOps.length).toBeGreaterThan(0);
    for (const op of webhookOps) {
      const path = op.path.replace(/\{[^}]+\}/g, 'whe_x');
      const res = await call(off, path, { method: op.method, body: op.method === 'GET' || op.method === 'DELETE' ? undefined : {} });
      expect([op.id, res.status]).toEqual([op.id, 404]);
      expect((await res.json()).detail).toContain('API_WEBHOOKS_ENABLED');
    }
    const on = await call(noMcp, '/v1/webhook-endpoints');
    expect(on.status).not.toBe(404);
  });

  it('API_EVENT_STREAM_ENABLED off: events.stream is 404, the events feed still answers', async () => {
    const res = await call(off, '/v1/events:stream');
    expect(res.status).toBe(404);
    expect((await res.json()).detail).toContain('API_EVENT_STREAM_ENABLED');
    const on = await call(noMcp, '/v1/events:stream');
    expect(on.status).not.toBe(404);
    await on.body?.cancel();
  });

  it('API_MCP_ENABLED off: /mcp is 404 not_found; REST is served', async () => {
    const { status, json } = await rpc(noMcp, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(status).toBe(404);
    expect(json.code).toBe('not_found');
    expect((await call(noMcp, '/v1/meta')).status).toBe(200);
  });
});

describe('/mcp Origin', () => {
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  it('a foreign Origin is 403 with a problem document; own origin, SVC_ALLOWED_ORIGINS and no Origin pass', async () => {
    const evil = await rpc(off, list, { origin: 'http://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('content-type')).toContain('application/problem+json');
    expect(evil.json.code).toBe('forbidden');
    expect((await rpc(off, list, { origin: new URL(off.config.baseUrl).origin })).status).toBe(200);
    expect((await rpc(off, list, { origin: 'https://console.example' })).status).toBe(200);
    expect((await rpc(off, list)).status).toBe(200);
  });
});

describe('JSON-RPC error codes', () => {
  it('well-formed JSON that is not a JSON-RPC request is -32600', async () => {
    for (const body of [{ id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: null, method: 'tools/list' }, { jsonrpc: '2.0', id: 1.5, method: 'tools/list' }, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [] }, 42, [], [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 'x']]) {
      const { status, json } = await rpc(off, body);
      expect([JSON.stringify(body), status, json.error.code]).toEqual([JSON.stringify(body), 400, -32600]);
    }
  });

  it('tools/call without a name or with arguments that are not an object is -32602 with a readable message', async () => {
    for (const params of [{}, { name: 42 }, { name: 'svc.meta.get', arguments: [] }, { name: 'svc.meta.get', arguments: null }, { name: 'svc.meta.get', arguments: 'x' }]) {
      const { json } = await rpc(off, { jsonrpc: '2.0', id: 7, method: 'tools/call', params });
      expect(json.id).toBe(7);
      expect(json.error.code).toBe(-32602);
      expect(json.error.message).not.toMatch(/\n|"code":|invalid_type/);
    }
    const unknown = await rpc(off, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'svc.nope', arguments: {} } });
    expect(unknown.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool') });
  });

  it('each tools/call of a batch spends one unit of the rate limit; a batch beyond what is left is 429 and runs nothing', async () => {
    const token = await readOnlyToken(off);
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } }));
    const first = await rpc(off, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${token}` });
    const start = Number(first.headers.get('x-ratelimit-remaining'));
    const res = await rpc(off, batch, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(100);
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(start - 100);
    const metaCalls = async () => {
      await off.flushAudit();
      const [row] = await off.database.execute<{ n: string }>(`select count(*)::text as n from audit_log where tool_name = 'svc.meta.get'`);
      return Number(row!.n);
    };
    let refused: Awaited<ReturnType<typeof rpc>> | null = null;
    let ranBefore = 0;
    for (let i = 0; i < 10 && !refused; i++) {
      ranBefore = await metaCalls();
      const r = await rpc(off, batch, { authorization: `Bearer ${token}` });
      if (r.status !== 200) refused = r;
    }
    expect(refused?.status).toBe(429);
    expect(refused?.json.code).toBe('rate_limited');
    expect(await metaCalls()).toBe(ranBefore);
  });
});
