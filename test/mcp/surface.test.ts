// The published MCP surface, as a real agent sees it through the SDK Client: tools/list fits an
// agent's context (at most 60 KB for the operator key's 54 tools), creating tools require their
// idempotencyKey, a dry run needs none, and every tool's input schema is the one the OpenAPI document
// publishes as x-svc-mcp.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';
import { connectMcp, ok, toolError, type McpSession } from './support.ts';

const LIMIT = 60 * 1024;

let s: TestServer;
let mcp: McpSession;
let tools: Awaited<ReturnType<McpSession['client']['listTools']>>['tools'];

beforeAll(async () => {
  s = await startTestServer();
  mcp = await connectMcp(s.url, s.credentials.operatorKey, { list: false });
  const listed = await mcp.client.listTools();
  tools = listed.tools;
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await s?.close();
});

function walk(node: unknown, visit: (key: string, value: unknown) => void): void {
  if (Array.isArray(node)) node.forEach((n) => walk(n, visit));
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      visit(k, v);
      walk(v, visit);
    }
}

describe('tools/list for the operator key', () => {
  it('lists the 54 tools in at most 60 KB, every description kept, without $ref or top-level unions', async () => {
    expect(tools).toHaveLength(54);
    const { tools: again } = await mcp.client.listTools();
    const bytes = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: again } }));
    expect(bytes).toBeLessThanOrEqual(LIMIT);
    for (const t of tools) {
      const op = operationsById[t.name.replace(/^svc\./, '')];
      expect(t.description, t.name).toBe(op.mcp!.description);
      for (const schema of [t.inputSchema, t.outputSchema]) {
        for (const k of ['anyOf', 'oneOf', 'allOf']) expect(schema && k in schema, `${t.name} ${k}`).toBe(false);
        walk(schema, (k) => expect(k, t.name).not.toBe('$ref'));
      }
    }
  });

  it('creating tools list idempotencyKey in required; other commands take it as optional', () => {
    const creating = Object.values(operationsById).filter((o) => o.mcp && o.kind === 'command' && o.idempotency === 'required');
    expect(creating.length).toBeGreaterThan(0);
    for (const t of tools) {
      const op = operationsById[t.name.replace(/^svc\./, '')];
      const required = (t.inputSchema.required ?? []) as string[];
      expect(required.includes('idempotencyKey'), t.name).toBe(op.idempotency === 'required');
    }
  });

  it('annotations are truthful: proposals are never idempotent, overwriting commands are destructive', () => {
    for (const t of tools) {
      const op = operationsById[t.name.replace(/^svc\./, '')];
      if (op.kind === 'read') expect(t.annotations, t.name).toEqual({ readOnlyHint: true, openWorldHint: op.mcp!.annotations.openWorldHint });
      if (op.tier === 2 || op.tier === 3) expect(t.annotations?.idempotentHint, t.name).toBe(false);
      if (op.method === 'PATCH' || op.method === 'PUT' || op.method === 'DELETE') expect(t.annotations?.destructiveHint, t.name).toBe(true);
    }
  });

  it("every tool's input schema equals x-svc-mcp in the served OpenAPI document", async () => {
    const res = await fetch(`${s.url}/v1/openapi.json`, { headers: { Authorization: `Bearer ${s.credentials.operatorKey}` } });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { 'x-svc-mcp'?: { name: string; inputSchema: unknown; outputSchema: unknown } }>> };
    const published = new Map<string, { inputSchema: unknown; outputSchema: unknown }>();
    for (const item of Object.values(doc.paths)) for (const o of Object.values(item)) if (o['x-svc-mcp']) published.set(o['x-svc-mcp'].name, o['x-svc-mcp']);
    expect(published.size).toBe(54);
    for (const t of tools) {
      expect(t.inputSchema, t.name).toEqual(published.get(t.name)!.inputSchema);
      expect(t.outputSchema, t.name).toEqual(published.get(t.name)!.outputSchema);
    }
  });
});

describe('idempotency keys over MCP', () => {
  it('a dry-run create without a key answers planned, with a plan of the published shape', async () => {
    const res = ok(await mcp.call('svc.tasks.create', { title: 'Dry run without a key', clientId: s.credentials.clientId, dryRun: true }));
    expect(res.outcome).toBe('planned');
    expect(Object.keys(res.plan).sort()).toEqual(['approvalRequired', 'effects', 'events', 'operationId', 'preview']);
    expect(res.plan.operationId).toBe('tasks.create');
    expect(res.plan.approvalRequired).toBe(false);
    expect(res.plan.preview.title).toBe('Dry run without a key');
  });

  it('a real create without a key is refused with an MCP-worded error, and creates nothing', async () => {
    const before = ok(await mcp.call('svc.tasks.list', { clientId: s.credentials.clientId, pageSize: 200 })).result.items.length;
    const err = toolError(await mcp.call('svc.tasks.create', { title: 'No key', clientId: s.credentials.clientId }));
    expect(err.code).toBe('idempotency_key_required');
    expect(err.detail).toBe('tasks.create needs idempotencyKey: send a new UUID as the idempotencyKey argument, and the same one when you retry this write.');
    const after = ok(await mcp.call('svc.tasks.list', { clientId: s.credentials.clientId, pageSize: 200 })).result.items.length;
    expect(after).toBe(before);
    const made = ok(await mcp.call('svc.tasks.create', { title: 'With a key', clientId: s.credentials.clientId, idempotencyKey: randomUUID() }));
    expect(made.outcome).toBe('ran');
  });

  it('REST: a dry run needs no Idempotency-Key either; a real create without one is refused with a header-worded error', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${s.url}/v1/tasks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${s.credentials.operatorKey}`, 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ title: 'REST dry run', clientId: s.credentials.clientId }),
      });
    const dry = await post({ Prefer: 'dry-run' });
    expect(dry.status).toBe(200);
    expect(((await dry.json()) as { outcome: string }).outcome).toBe('planned');
    const refused = await post({});
    expect(refused.status).toBe(400);
    const problem = (await refused.json()) as { code: string; detail: string };
    expect(problem.code).toBe('idempotency_key_required');
    expect(problem.detail).toContain('Idempotency-Key header');
  });
});
