// /mcp end to end: the real server (test/support/server.ts) on a free port, the MCP SDK's own Client
// over Streamable HTTP. Runs on PGlite, and on PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { mcpTools } from '../../generated/mcp-tools.ts';
import { operationsById, service as contractService } from '../../generated/registry.ts';
import { connectMcp, ok, probeAuthDiscovery, structured, toolError, type McpSession } from './support.ts';

const openapi = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { 'x-svc-mcp'?: Record<string, unknown> }>>;
};
const xSvcMcp = new Map<string, Record<string, unknown>>();
for (const item of Object.values(openapi.paths)) {
  for (const op of Object.values(item)) {
    if (op && typeof op === 'object' && op['x-svc-mcp']) xSvcMcp.set(String(op['x-svc-mcp'].name), op['x-svc-mcp']);
  }
}

async function count(s: TestServer, table: string): Promise<number> {
  const rows = await s.database.execute<{ n: number | string }>(`select count(*) as n from ${table}`);
  return Number(rows[0]?.n ?? 0);
}

describe('MCP end to end', () => {
  let s: TestServer;
  let idp: TestIdp;
  let operator: McpSession;
  let service: McpSession;
  const sessions: McpSession[] = [];

  async function oauthToken(sub: string): Promise<string> {
    return idp.issueToken({
      sub,
      aud: `${s.config.baseUrl}/mcp`,
      scope: [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' '),
      client_id: s.credentials.oauthClientId,
    });
  }
  async function session(credential: string): Promise<McpSession> {
    const m = await connectMcp(s.url, credential);
    sessions.push(m);
    return m;
  }

  beforeAll(async () => {
    idp = await startIdp();
    s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, app: { rateLimit: { limit: 100_000 } } });
    operator = await session(s.credentials.operatorKey);
    service = await session(s.credentials.serviceKey);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(sessions.map((m) => m.close().catch(() => undefined)));
    await s?.close();
    await idp?.close();
  });

  describe('reused servers', () => {
    it('answers concurrent calls from two credentials each as its own caller (servers are pooled across requests)', async () => {
      const who = async (m: McpSession) => (structured(await m.call('svc.meta.get')) as { result: { principal: { credentialId: string } } }).result.principal.credentialId;
      const expected = { operator: await who(operator), service: await who(service) };
      expect(expected.operator).not.toBe(expected.service);
      const calls = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? (['operator', operator] as const) : (['service', service] as const)));
      const answers = await Promise.all(calls.map(async ([name, m]) => [name, await who(m)] as const));
      for (const [name, credentialId] of answers) expect(credentialId, name).toBe(expected[name]);
      const lists = await Promise.all([operator, service, operator, service].map(async (m) => (await m.client.listTools()).tools.length));
      expect(lists).toEqual([54, lists[1], 54, lists[1]]);
      expect(lists[1]).toBeLessThan(54);
    });
  });

  describe('tools/list', () => {
    it('lists all 54 tools for the operator key, exactly as published in x-svc-mcp', async () => {
      const { tools } = await operator.client.listTools();
      expect(tools).toHaveLength(54);
      expect(tools.map((t) => t.name)).toEqual(mcpTools.map((t) => t.name));
      for (const t of tools) {
        const doc = xSvcMcp.get(t.name)!;
        expect(doc, t.name).toBeDefined();
        expect(t.inputSchema, t.name).toEqual(doc.inputSchema);
        expect(t.outputSchema, t.name).toEqual(doc.outputSchema);
        expect(t.annotations, t.name).toEqual(doc.annotations);
        expect(t.title, t.name).toBe(doc.title);
        expect(t.description, t.name).toBe(doc.description);
        expect(JSON.stringify(t.inputSchema), t.name).not.toMatch(/"\$ref"|"\$defs"/);
        expect(t.inputSchema.anyOf ?? t.inputSchema.oneOf, t.name).toBeUndefined();
        const op = operationsById[t.name.slice(4)]!;
        expect(t.annotations?.readOnlyHint, t.name).toBe(op.kind === 'read');
      }
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect(byName.get('svc.tasks.create')!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
      expect(byName.get('svc.tasks.update')!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true, destructiveHint: true });
      expect(tools.some((t) => t.name.includes('_') && !t.name.includes('.'))).toBe(false);
    });

    it('lists fewer tools for the service key (audience) and for a client admin (audience and scopes)', async () => {
      const svcTools = (await service.client.listTools()).tools.map((t) => t.name);
      expect(svcTools.length).toBeLessThan(54);
      for (const name of svcTools) expect(operationsById[name.slice(4)]!.audience).toContain('service_account');
      expect(svcTools).toContain('svc.meta.get');

      const admin = await session(await oauthToken(s.credentials.clientAdminSub));
      const adminTools = (await admin.client.listTools()).tools.map((t) => t.name);
      expect(adminTools.length).toBeLessThan(54);
      expect(adminTools).toContain('svc.tasks.create');
      const meta = ok(await admin.call('svc.meta.get')).result;
      const scopes = new Set<string>(meta.effectiveScopes ?? meta.scopes ?? []);
      for (const name of adminTools) {
        const op = operationsById[name.slice(4)]!;
        expect(op.audience, name).toContain('client_admin');
        if (op.scope) expect(scopes.has(op.scope), name).toBe(true);
      }
    });

    it('a viewer (no permissions) sees only the tools that need no scope, and is refused the rest', async () => {
      const viewer = await session(await oauthToken(String(s.credentials.viewerSub)));
      const names = (await viewer.client.listTools()).tools.map((t) => t.name);
      for (const n of names) expect(operationsById[n.slice(4)]!.scope, n).toBeNull();
      expect(names).toContain('svc.meta.get');
      const err = toolError(await viewer.call('svc.tasks.create', { title: 'x', idempotencyKey: randomUUID() }));
      expect(err).toMatchObject({ code: 'insufficient_scope', status: 403, retryable: false });
      expect(err.detail).toContain('tasks:write');
    });
  });

  describe('tools/call', () => {
    it('svc.meta.get answers the same as GET /v1/meta', async () => {
      const res = ok(await operator.call('svc.meta.get'));
      expect(res.outcome).toBe('ran');
      const rest = await fetch(`${s.url}/v1/meta`, { headers: { Authorization: `Bearer ${s.credentials.operatorKey}` } });
      expect(res.result).toEqual(await rest.json());
    });

    it('svc.tasks.create runs once per idempotencyKey and replays the first answer', async () => {
      const before = await count(s, 'tasks');
      const key = randomUUID();
      const args = { title: 'MCP task', clientId: s.credentials.clientId, idempotencyKey: key };
      const first = await operator.call('svc.tasks.create', args);
      const ran = ok(first);
      expect(ran.outcome).toBe('ran');
      expect(ran.result).toMatchObject({ title: 'MCP task', clientId: s.credentials.clientId });
      const again = await operator.call('svc.tasks.create', args);
      expect(ok(again)).toEqual(ran);
      expect(again._meta?.['svc/idempotencyReplayed']).toBe(true);
      expect(await count(s, 'tasks')).toBe(before + 1);
      // The same key with a different input is refused.
      const reused = toolError(await operator.call('svc.tasks.create', { ...args, title: 'other' }));
      expect(reused.code).toBe('idempotency_key_reused');
      expect(await count(s, 'tasks')).toBe(before + 1);
    });

    it('20 parallel tools/call with one idempotencyKey create exactly one task', async () => {
      const before = await count(s, 'tasks');
      const args = { title: 'parallel', clientId: s.credentials.clientId, idempotencyKey: randomUUID() };
      const results = await Promise.all(Array.from({ length: 20 }, () => operator.call('svc.tasks.create', args)));
      const ids = new Set<string>();
      for (const r of results) {
        if (r.isError) {
          const e = toolError(r);
          expect(e.code).toBe('idempotency_key_in_progress');
          expect(e.retryable).toBe(true);
        } else ids.add(ok(r).result.id);
      }
      expect(ids.size).toBe(1);
      expect(await count(s, 'tasks')).toBe(before + 1);
    });

    it('svc.tasks.create with dryRun plans and writes nothing', async () => {
      const before = await count(s, 'tasks');
      const res = ok(await operator.call('svc.tasks.create', { title: 'plan', clientId: s.credentials.clientId, idempotencyKey: randomUUID(), dryRun: true }));
      expect(res.outcome).toBe('planned');
      expect(res.plan).toMatchObject({ operationId: 'tasks.create' });
      expect(await count(s, 'tasks')).toBe(before);
    });

    it('without idempotencyKey: isError idempotency_key_required, retryable false', async () => {
      const before = await count(s, 'tasks');
      const err = toolError(await operator.call('svc.tasks.create', { title: 'x', clientId: s.credentials.clientId }));
      expect(err).toMatchObject({ code: 'idempotency_key_required', status: 400, retryable: false });
      expect(await count(s, 'tasks')).toBe(before);
    });

    it('invalid input: isError validation_failed with a pointer per failing field', async () => {
      const err = toolError(await operator.call('svc.tasks.create', { title: '', clientId: s.credentials.clientId, bogus: 1, idempotencyKey: randomUUID() }));
      expect(err).toMatchObject({ code: 'validation_failed', status: 422, retryable: false });
      const pointers = err.errors.map((e) => e.pointer);
      expect(pointers).toContain('/title');
      expect(err.errors.length).toBeGreaterThanOrEqual(2);
      const typed = toolError(await operator.call('svc.tasks.create', { title: 'x', idempotencyKey: 42 }));
      expect(typed.errors.map((e) => e.pointer)).toContain('/idempotencyKey');
    });

    it('a client-scoped caller gets not_found for a client outside its reach', async () => {
      const err = toolError(await service.call('svc.tasks.create', { title: 'x', clientId: s.credentials.otherClientId, idempotencyKey: randomUUID() }));
      expect(err.code).toBe('not_found');
    });

    it('svc.projects.create is Tier 2: outcome proposed with an approval, no project written', async () => {
      const projects = await count(s, 'projects');
      const res = ok(await operator.call('svc.projects.create', { clientId: s.credentials.clientId, name: 'Proposed via MCP', idempotencyKey: randomUUID() }));
      expect(res.outcome).toBe('proposed');
      expect(res.approval).toBeDefined();
      expect(await count(s, 'projects')).toBe(projects);
      const approval = ok(await operator.call('svc.approvals.get', { approval_id: res.approval.id }));
      expect(approval.result.id).toBe(res.approval.id);
    });

    it('tasks.update needs ifMatch and refuses a stale one', async () => {
      const created = ok(await operator.call('svc.tasks.create', { title: 'to update', clientId: s.credentials.clientId, idempotencyKey: randomUUID() }));
      const id = created.result.id;
      expect(toolError(await operator.call('svc.tasks.update', { task_id: id, title: 'n' })).code).toBe('precondition_required');
      const updated = ok(await operator.call('svc.tasks.update', { task_id: id, title: 'new', ifMatch: created.result.etag }));
      expect(updated.result.title).toBe('new');
      const stale = toolError(await operator.call('svc.tasks.update', { task_id: id, title: 'again', ifMatch: created.result.etag }));
      expect(stale.code).toBe('precondition_failed');
    });

    it('an unknown tool is a JSON-RPC error -32602, not a tool result', async () => {
      await expect(operator.client.callTool({ name: 'svc.nope', arguments: {} })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Unknown tool: "svc.nope"'),
      });
    });

    it('the audit records each tools/call with the tool name', async () => {
      await operator.call('svc.meta.get');
      await s.flushAudit();
      const rows = await s.database.execute<{ tool_name: string | null; transport: string }>(
        `select * from audit_log where transport = 'mcp' and tool_name = 'svc.meta.get'`,
      );
      expect(rows.length).toBeGreaterThan(0);
    });
  });

  describe('HTTP level', () => {
    it('401 without a credential, pointing at the /mcp protected-resource metadata', async () => {
      const res = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${s.config.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(await res.json()).toMatchObject({ code: 'unauthorized', status: 401, instance: '/mcp' });
      for (const h of ['x-svc-api-version', 'x-request-id', 'traceparent', 'ratelimit-policy']) expect(res.headers.get(h), h).toBeTruthy();
    });

    it('401 invalid_token for a refused credential', async () => {
      const res = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: 'Bearer svc_sk_test_nope' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      const params = extractWWWAuthenticateParams(res);
      expect(params.resourceMetadataUrl?.href).toBe(`${s.config.baseUrl}/.well-known/oauth-protected-resource/mcp`);
      expect(params.error).toBe('invalid_token');
    });

    it("the SDK client's auth discovery fetches /.well-known/oauth-protected-resource/mcp, whose resource is /mcp", async () => {
      const seen = await probeAuthDiscovery(`${s.url}/mcp`);
      const metadataUrl = `${s.config.baseUrl}/.well-known/oauth-protected-resource/mcp`;
      expect(seen).toContain(metadataUrl);
      const metadata = await (await fetch(metadataUrl)).json();
      expect(metadata.resource).toBe(`${s.config.baseUrl}/mcp`);
    });

    it('tools/call responses carry the app-wide headers', async () => {
      const res = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${s.credentials.operatorKey}`,
          'MCP-Protocol-Version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-svc-api-version')).toBe(contractService.apiVersion);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(res.headers.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/);
      expect(res.headers.get('ratelimit')).toBeTruthy();
      expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
      const body = await res.json();
      expect(body.result.structuredContent.outcome).toBe('ran');
    });

    it('GET /mcp is 405 (stateless server: no SSE stream)', async () => {
      const res = await fetch(`${s.url}/mcp`, { headers: { Accept: 'text/event-stream', Authorization: `Bearer ${s.credentials.operatorKey}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    });
  });
});

describe('MCP with the write switch off', () => {
  let s: TestServer;
  let m: McpSession;
  beforeAll(async () => {
    s = await startTestServer({ writesEnabled: false });
    m = await connectMcp(s.url, s.credentials.operatorKey);
  }, 60_000);
  afterAll(async () => {
    await m?.close().catch(() => undefined);
    await s?.close();
  });

  it('commands answer isError not_found, reads still work', async () => {
    const before = await count(s, 'tasks');
    const err = toolError(await m.call('svc.tasks.create', { title: 'x', clientId: s.credentials.clientId, idempotencyKey: randomUUID() }));
    expect(err).toMatchObject({ code: 'not_found', status: 404 });
    expect(toolError(await m.call('svc.projects.create', { clientId: s.credentials.clientId, name: 'p', idempotencyKey: randomUUID() })).code).toBe('not_found');
    expect(await count(s, 'tasks')).toBe(before);
    expect(ok(await m.call('svc.meta.get')).outcome).toBe('ran');
    expect(ok(await m.call('svc.tasks.list', {})).result.items).toBeInstanceOf(Array);
  });
});

describe('MCP underscore aliases', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ mcpUnderscoreAliases: true });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  it('are listed beside the dotted names when the setting is on, and call the same operation', async () => {
    const m = await connectMcp(s.url, s.credentials.operatorKey);
    try {
      const names = (await m.client.listTools()).tools.map((t) => t.name);
      expect(names).toHaveLength(108);
      expect(names).toContain('svc_tasks_create');
      const before = await count(s, 'tasks');
      const res = ok(await m.call('svc_tasks_create', { title: 'alias', clientId: s.credentials.clientId, idempotencyKey: randomUUID() }));
      expect(res.outcome).toBe('ran');
      expect(await count(s, 'tasks')).toBe(before + 1);
      await s.flushAudit();
      const rows = await s.database.execute(`select * from audit_log where tool_name = 'svc_tasks_create'`);
      expect(rows.length).toBe(1);
    } finally {
      await m.close();
    }
  });
});

describe('MCP when token verification has no key set', () => {
  let s: TestServer;
  let idp: TestIdp;
  beforeAll(async () => {
    idp = await startIdp();
    idp.setBehaviour('error500');
    s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await idp?.close();
  });

  it('answers an OAuth token with 503 not_configured and Retry-After: 30; API keys still work', async () => {
    const token = await idp.issueToken({ sub: s.credentials.operatorSub, aud: `${s.config.baseUrl}/mcp`, scope: 'tasks:read', client_id: s.credentials.oauthClientId });
    const res = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(await res.json()).toMatchObject({ code: 'not_configured', retryable: true });
    const m = await connectMcp(s.url, s.credentials.operatorKey);
    try {
      expect(ok(await m.call('svc.meta.get')).outcome).toBe('ran');
    } finally {
      await m.close();
    }
  });
});
