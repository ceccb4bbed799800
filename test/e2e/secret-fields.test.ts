// Bearer secrets (x-svc-secret fields) on fixture handlers of the two real secret-bearing commands:
// webhooks.endpoint.create (Tier 1, idempotency required) and keys.create (Tier 2). The fixtures make
// a fresh secret per call and deliberately put their whole result, secret included, into an event,
// so the runtime's guards are what keeps it out. The rules (DESIGN.md, runtime/auth/secret-fields.ts):
// the answer to the causing credential carries the secret; a replay to that credential carries the
// same one, a replay attempt by another credential of the same owner gets its own fresh answer; a
// dry-run preview, the approver's view, the approval events and the fixture's own event carry none;
// and afterwards no table, audit row or log line holds any of them in clear. None of these operations
// (nor approvals.*) is an MCP tool, which the last test asserts over a real MCP session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HandlerContext } from '../../runtime/handler-types.ts';
import type { AnyHandler } from '../../runtime/pipeline/executor.ts';
import { svcRegistry } from '../../bin/wiring.ts';
import { operationsById, secretPointers } from '../../generated/registry.ts';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const issued: string[] = [];
let counter = 0;

function stamp(ctx: HandlerContext) {
  const at = ctx.now.toISOString();
  return { createdAt: at, updatedAt: at };
}

const webhookCreate: AnyHandler = async (input: { url: string; eventTypes: string[]; description?: string; clientId?: string }, ctx) => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  issued.push(secret);
  const result = {
    id: `whe_fixture${++counter}`,
    url: input.url,
    description: input.description ?? '',
    eventTypes: input.eventTypes,
    status: 'enabled',
    clientId: input.clientId ?? null,
    ...stamp(ctx),
    etag: `"fixture-${counter}"`,
    secret,
  };
  await ctx.emit('task.updated', { clientId: null, subjectId: result.id }, { endpoint: result, note: 'fixture leaks on purpose' });
  return result;
};

const keyCreate: AnyHandler = async (input: { name: string; scopes: string[]; clientIds?: string[] }, ctx) => {
  const secret = `svc_sk_test_${randomBytes(32).toString('base64url')}`;
  issued.push(secret);
  const result = {
    id: `key_fixture${++counter}`,
    name: input.name,
    prefix: secret.slice(0, 16),
    mode: 'test',
    scopes: input.scopes,
    clientIds: input.clientIds ?? [],
    ipAllowlist: [],
    createdAt: ctx.now.toISOString(),
    expiresAt: new Date(ctx.now.getTime() + 90 * 86_400_000).toISOString(),
    lastUsedAt: null,
    revokedAt: null,
    secret,
  };
  await ctx.emit('task.updated', { clientId: null, subjectId: result.id }, result);
  return result;
};

let s: TestServer;
let idp: TestIdp;

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({
    oauthIssuer: idp.issuer,
    oauthJwksUrl: idp.jwksUrl,
    app: {
      registry: {
        ...svcRegistry(),
        handlers: { ...svcRegistry().handlers, 'webhooks.endpoint.create': webhookCreate, 'keys.create': keyCreate },
      },
    },
  });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
});

function post(path: string, credential: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function get(path: string, credential: string) {
  return fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${credential}` } });
}

function token(sub: string): Promise<string> {
  const scope = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');
  return idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
}

/** Every row of every table (audit_log included) as text. */
async function everyRow(): Promise<string> {
  const tables = await s.database.execute<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`,
  );
  const out: string[] = [];
  for (const { name } of tables) {
    for (const row of await s.database.execute<{ r: string }>(`select t::text as r from "${name}" t`)) out.push(`${name}: ${row.r}`);
  }
  return out.join('\n');
}

async function eventData(): Promise<string> {
  const rows = await s.database.execute<{ d: string }>(`select data::text as d from events order by seq`);
  return rows.map((r) => r.d).join('\n');
}

async function mcp(credential: string): Promise<Client> {
  const client = new Client({ name: 'secret-fields-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
  return client;
}

async function mcpGet(credential: string, approvalId: string): Promise<unknown> {
  const client = await mcp(credential);
  try {
    const res = await client.callTool({ name: 'svc.approvals.get', arguments: { approval_id: approvalId } });
    expect(res.isError).toBeFalsy();
    return (res.structuredContent as { result: unknown }).result;
  } finally {
    await client.close();
  }
}

const endpointInput = { url: 'https://hooks.example.com/svc', eventTypes: ['task.created'] };

describe('bearer secrets: Tier 1 (webhooks.endpoint.create)', () => {
  it('the causing credential gets the secret; its replay gets the same one; another credential of the owner gets its own', async () => {
    const key = randomUUID();
    const first = await post('/v1/webhook-endpoints', s.credentials.operatorKey, endpointInput, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const a = (await first.json()).result;
    expect(a.secret).toMatch(/^whsec_/);

    const again = await post('/v1/webhook-endpoints', s.credentials.operatorKey, endpointInput, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect((await again.json()).result).toEqual(a);

    // The owner signed in with OAuth (another credential of the same person) sends the same key and
    // body: a fresh answer, never the first secret.
    const other = await post('/v1/webhook-endpoints', await token(s.credentials.operatorSub as string), endpointInput, { 'idempotency-key': key });
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotency-replayed')).toBeNull();
    const b = (await other.json()).result;
    expect(b.secret).toMatch(/^whsec_/);
    expect(b.secret).not.toBe(a.secret);

    // The stored idempotency answer holds the secret sealed, not in clear.
    const stored = await s.database.execute<{ r: string }>(`select response_body::text as r from idempotency_records`);
    expect(stored.some((x) => x.r.includes('svc-sealed:v1:'))).toBe(true);
    expect(stored.map((x) => x.r).join('\n')).not.toContain(a.secret);
  });

  it('a dry run previews the endpoint without any secret and says why', async () => {
    const res = await post('/v1/webhook-endpoints', s.credentials.operatorKey, endpointInput, { prefer: 'dry-run' });
    expect(res.status).toBe(200);
    const { plan } = await res.json();
    expect(plan.preview).toMatchObject({ url: endpointInput.url, status: 'enabled' });
    expect(plan.preview).not.toHaveProperty('secret');
    expect(plan.effects.join(' ')).toMatch(/returns its secret once/);
  });

  it("the fixture's event lost the secret before it committed", async () => {
    const data = await eventData();
    expect(data).toContain('fixture leaks on purpose');
    for (const secret of issued) expect(data).not.toContain(secret);
  });
});

describe('bearer secrets: Tier 2 (keys.create)', () => {
  it('the proposing credential reads the approved secret once, on its approval; the approver, lists, events and others never do', async () => {
    const proposed = await post('/v1/api-keys', s.credentials.operatorKey, { name: 'Fixture key', scopes: ['tasks:read'] }, { 'idempotency-key': randomUUID() });
    expect(proposed.status).toBe(202);
    const approvalId = (await proposed.json()).approval.id as string;

    const approver = await token(s.credentials.adminSub as string);
    const decided = await post(`/v1/approvals/${approvalId}:approve`, approver, {});
    expect(decided.status).toBe(200);
    const view = (await decided.json()).result;
    expect(view.status).toBe('approved');
    expect(view.result).toMatchObject({ name: 'Fixture key', mode: 'test' });
    expect(view.result).not.toHaveProperty('secret');
    const secret = issued.at(-1) ?? '';
    expect(secret).toMatch(/^svc_sk_test_/);

    // At rest, until it is shown, the approval keeps it sealed.
    const sealedRow = await s.database.execute<{ r: string }>(`select result::text as r from approvals where id = '${approvalId}'`);
    expect(sealedRow[0]!.r).toContain('svc-sealed:v1:');
    expect(sealedRow[0]!.r).not.toContain(secret);

    // Lists never show it, not even to the proposer; the approver sees the approval without it; the
    // owner's other key does not see the approval at all.
    const listed = await (await get(`/v1/approvals?status=approved`, s.credentials.operatorKey)).json();
    expect(listed.items.find((x: { id: string }) => x.id === approvalId).result).not.toHaveProperty('secret');
    const theirs = await (await get(`/v1/approvals/${approvalId}`, approver)).json();
    expect(theirs.result).toMatchObject({ name: 'Fixture key' });
    expect(theirs.result).not.toHaveProperty('secret');
    expect(((await mcpGet(approver, approvalId)) as { result: object }).result).not.toHaveProperty('secret');
    expect((await get(`/v1/approvals/${approvalId}`, s.credentials.serviceKey)).status).toBe(404);

    // The proposing credential's first approvals.get: the approved write's answer, secret included. Once.
    const mine = await (await get(`/v1/approvals/${approvalId}`, s.credentials.operatorKey)).json();
    expect(mine.result.secret).toBe(secret);
    const again = await (await get(`/v1/approvals/${approvalId}`, s.credentials.operatorKey)).json();
    expect(again.result).toMatchObject({ name: 'Fixture key' });
    expect(again.result).not.toHaveProperty('secret');
    expect(((await mcpGet(s.credentials.operatorKey, approvalId)) as { result: object }).result).not.toHaveProperty('secret');
    const [row] = await s.database.execute<{ r: string }>(`select result::text as r from approvals where id = '${approvalId}'`);
    expect(row!.r).not.toContain('svc-sealed:v1:');

    // approval.approved carries the Approval without the secret; the fixture's own event lost it too.
    const events = await s.database.execute<{ type: string; d: string }>(`select type, data::text as d from events where subject_id = '${approvalId}'`);
    expect(events.map((e) => e.type)).toEqual(['approval.approved']);
    expect(events[0]!.d).toContain('Fixture key');
    expect(await eventData()).not.toContain(secret);
  });

  it('over MCP (approvals.get is a tool) the first read by the proposing credential shows it, and only that one', async () => {
    const proposed = await post('/v1/api-keys', s.credentials.operatorKey, { name: 'Fixture key 3', scopes: ['tasks:read'] }, { 'idempotency-key': randomUUID() });
    const approvalId = (await proposed.json()).approval.id as string;
    expect((await post(`/v1/approvals/${approvalId}:approve`, await token(s.credentials.adminSub as string), {})).status).toBe(200);
    const secret = issued.at(-1) ?? '';
    const reads = await Promise.all([mcpGet(s.credentials.operatorKey, approvalId), mcpGet(s.credentials.operatorKey, approvalId)]);
    const shown = reads.map((r) => (r as { result: { secret?: string } }).result.secret).filter(Boolean);
    expect(shown).toEqual([secret]);
  });

  it('a dry-run approve previews the approval without the secret', async () => {
    const proposed = await post('/v1/api-keys', s.credentials.operatorKey, { name: 'Fixture key 2', scopes: ['tasks:read'] }, { 'idempotency-key': randomUUID() });
    const approvalId = (await proposed.json()).approval.id as string;
    const res = await post(`/v1/approvals/${approvalId}:approve`, await token(s.credentials.adminSub as string), {}, { prefer: 'dry-run' });
    expect(res.status).toBe(200);
    const { plan } = await res.json();
    expect(plan.preview.result).toMatchObject({ name: 'Fixture key 2' });
    expect(plan.preview.result).not.toHaveProperty('secret');
    expect(JSON.stringify(plan)).not.toContain(issued.at(-1) ?? 'none issued');
  });
});

describe('bearer secrets: nowhere else', () => {
  it('no table, audit row or log line holds an issued secret in clear', async () => {
    await s.flushAudit();
    expect(issued.length).toBeGreaterThanOrEqual(4);
    const rows = await everyRow();
    const logs = s.logs.join('\n');
    for (const secret of issued) {
      expect(rows).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });

  it('no secret-bearing operation is an MCP tool', async () => {
    const client = await mcp(s.credentials.operatorKey);
    const { tools } = await client.listTools();
    await client.close();
    const names = new Set(tools.map((t) => t.name));
    expect(names.has('svc.approvals.get')).toBe(true);
    for (const id of Object.keys(secretPointers)) expect(names.has(`svc.${id}`)).toBe(false);
  });
});
