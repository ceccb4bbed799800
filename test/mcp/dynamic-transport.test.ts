// The dynamic mode of the MCP layer alone (runtime/mcp with a scripted executor and a fake tool
// table, the contract's own meta-tools): the query parameter, what each mode lets tools/call name,
// argument validation, the uniform refusal, invoke handing the real tool to the executor, aliases,
// and one rate-limit unit per tools/call of a batch. The end-to-end suite is dynamic.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { service } from '../../generated/registry.ts';
import { fakeTools, startHarness, type Harness } from './harness.ts';

const META = Object.fromEntries(service.mcpDynamicTools.map((t) => [t.role, t.name])) as Record<'search' | 'describe' | 'read' | 'invoke', string>;

const rpcHeaders = (token: string) => ({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` });
async function rpc(url: string, token: string, body: unknown): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(url, { method: 'POST', headers: rpcHeaders(token), body: JSON.stringify(body) });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

function structured(res: unknown): Record<string, any> {
  return (res as CallToolResult).structuredContent as Record<string, any>;
}
/** An error result without its request id (which differs per call). */
function errorOf(res: unknown): Record<string, unknown> {
  const r = res as CallToolResult;
  expect(r.isError).toBe(true);
  return { error: structured(r).error, type: (r._meta as Record<string, unknown>)['svc/type'] };
}

describe('dynamic mode (scripted executor)', () => {
  let h: Harness;
  const spent: number[] = [];
  beforeAll(async () => {
    h = await startHarness({}, { spent });
  });
  afterAll(async () => {
    await h.close();
  });

  it('lists the contract meta-tools for every caller, while /mcp keeps the static list', async () => {
    for (const token of ['operator', 'reader', 'admin']) {
      const dynamic = await h.client(token, { mode: 'dynamic' });
      expect((await dynamic.listTools()).tools.map((t) => t.name)).toEqual(service.mcpDynamicTools.map((t) => t.name));
      expect(dynamic.getServerCapabilities()?.resources).toBeDefined();
      expect(dynamic.getInstructions()).toContain(META.search);
    }
    const staticClient = await h.client('operator', { mode: 'static' });
    expect((await staticClient.listTools()).tools.map((t) => t.name)).toEqual(fakeTools.map((t) => t.name));
    expect(staticClient.getServerCapabilities()?.resources).toBeDefined();
    expect(await staticClient.listResources()).toEqual({ resources: [] });
  });

  it('calls only the meta-tools in dynamic mode, and only the operation tools in static mode (-32602 otherwise)', async () => {
    const dyn = await rpc(`${h.url}?mode=dynamic`, 'operator', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } });
    expect(dyn.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: "svc.meta.get"') });
    const stat = await rpc(h.url, 'operator', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: META.search, arguments: { query: 'tasks' } } });
    expect(stat.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool') });
    const notObject = await rpc(`${h.url}?mode=dynamic`, 'operator', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: META.invoke, arguments: [] } });
    expect(notObject.json.error.code).toBe(-32602);
  });

  it('refuses a mode it does not know, or given twice, with validation_failed on /mode; GET stays 405', async () => {
    for (const query of ['mode=foo', 'mode=Dynamic', 'mode=dynamic&mode=static', 'mode=']) {
      const res = await rpc(`${h.url}?${query}`, 'operator', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(res.status, query).toBe(422);
      expect(res.json).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/mode' }] });
    }
    const same = await rpc(`${h.url}?mode=static`, 'operator', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(same.json.result.tools.map((t: { name: string }) => t.name)).toEqual(fakeTools.map((t) => t.name));
    const get = await fetch(`${h.url}?mode=dynamic`, { headers: rpcHeaders('operator') });
    expect(get.status).toBe(405);
  });

  it("validates each meta-tool's arguments against its published input schema", async () => {
    const client = await h.client('operator', { mode: 'dynamic' });
    await client.listTools();
    const cases: [string, Record<string, unknown>, string][] = [
      [META.search, {}, '/query'],
      [META.search, { query: 5 }, '/query'],
      [META.search, { query: '   ' }, '/query'],
      [META.search, { query: 'x', limit: 3 }, '/limit'],
      [META.describe, { tool: '' }, '/tool'],
      [META.invoke, { tool: 'svc.tasks.get', arguments: [] }, '/arguments'],
      [META.read, { tool: 'svc.tasks.get', arguments: 'x' }, '/arguments'],
    ];
    const before = h.calls.length;
    for (const [name, args, pointer] of cases) {
      const { error } = errorOf(await client.callTool({ name, arguments: args }));
      expect(error, `${name} ${JSON.stringify(args)}`).toMatchObject({ code: 'validation_failed', status: 422, errors: [expect.objectContaining({ pointer })] });
    }
    expect(h.calls.length).toBe(before);
  });

  it('search ranks only the tools the caller may call', async () => {
    const search = async (token: string, query: string) => {
      const client = await h.client(token, { mode: 'dynamic' });
      await client.listTools();
      return (structured(await client.callTool({ name: META.search, arguments: { query } })).result.tools as { name: string }[]).map((t) => t.name);
    };
    expect((await search('operator', 'create a task'))[0]).toBe('svc.tasks.create');
    expect(await search('operator', 'secret thing')).toEqual(['svc.keys.secret_thing']);
    // keys.secret_thing is operator-only; tasks.create needs tasks:write, which the reader lacks.
    expect(await search('reader', 'secret thing')).toEqual([]);
    expect(await search('admin', 'secret thing')).toEqual([]);
    expect(await search('reader', 'tasks')).toEqual(['svc.tasks.get']);
    const found = await h.client('operator', { mode: 'dynamic' });
    const item = structured(await found.callTool({ name: META.search, arguments: { query: 'tasks get' } })).result.tools[0];
    expect(item).toEqual({ name: 'svc.tasks.get', summary: 'tasks.get', kind: 'read', tier: null, scope: 'tasks:read' });
  });

  it('invoke and read hand the real tool to the executor, with the controls split out as tools/call does', async () => {
    const client = await h.client('operator', { mode: 'dynamic' });
    await client.listTools();
    const before = h.calls.length;
    const key = randomUUID();
    const ran = structured(await client.callTool({ name: META.invoke, arguments: { tool: 'svc.tasks.create', arguments: { title: 'a', idempotencyKey: key, dryRun: true } } }));
    expect(ran).toEqual({ outcome: 'planned', plan: { operationId: 'tasks.create' } });
    const read = structured(await client.callTool({ name: META.read, arguments: { tool: 'svc.tasks.get', arguments: { task_id: 't1' } } }));
    expect(read).toEqual({ outcome: 'ran', result: { echo: { task_id: 't1' } } });
    expect(h.calls.slice(before).map((c) => [c.toolName, c.op.id, c.input, c.controls])).toEqual([
      ['svc.tasks.create', 'tasks.create', { title: 'a' }, { idempotencyKey: key, ifMatch: null, dryRun: true }],
      ['svc.tasks.get', 'tasks.get', { task_id: 't1' }, { idempotencyKey: null, ifMatch: null, dryRun: false }],
    ]);
    const command = errorOf(await client.callTool({ name: META.read, arguments: { tool: 'svc.tasks.create', arguments: { title: 'a' } } }));
    expect(command.error).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/tool', message: expect.stringContaining(META.invoke) }] });
    expect(h.calls.length).toBe(before + 2);
  });

  it('answers an unknown tool and a tool the caller may not call with the same not_found, and runs neither', async () => {
    const reader = await h.client('reader', { mode: 'dynamic' });
    await reader.listTools();
    const before = h.calls.length;
    const swap = (e: Record<string, unknown>, from: string) => JSON.parse(JSON.stringify(e).replaceAll(from, 'NAME'));
    for (const role of ['describe', 'read', 'invoke'] as const) {
      const args = (tool: string) => (role === 'describe' ? { tool } : { tool, arguments: {} });
      const hidden = errorOf(await reader.callTool({ name: META[role], arguments: args('svc.keys.secret_thing') }));
      const scoped = errorOf(await reader.callTool({ name: META[role], arguments: args('svc.tasks.create') }));
      const unknown = errorOf(await reader.callTool({ name: META[role], arguments: args('svc.nope.nothing') }));
      expect(hidden.error, role).toMatchObject({ code: 'not_found', status: 404, retryable: false, errors: [{ pointer: '/tool' }] });
      expect(swap(hidden, 'svc.keys.secret_thing'), role).toEqual(swap(unknown, 'svc.nope.nothing'));
      expect(swap(scoped, 'svc.tasks.create'), role).toEqual(swap(unknown, 'svc.nope.nothing'));
    }
    expect(h.calls.length).toBe(before);
  });

  it('spends one rate-limit unit per tools/call of a batch, meta-tools included', async () => {
    spent.length = 0;
    const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const batch = [
      call(1, META.search, { query: 'tasks' }),
      call(2, META.describe, { tool: 'svc.tasks.get' }),
      call(3, META.invoke, { tool: 'svc.meta.get' }),
      call(4, META.read, { tool: 'svc.tasks.get', arguments: { task_id: 't1' } }),
    ];
    const res = await rpc(`${h.url}?mode=dynamic`, 'operator', batch);
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(4);
    expect(res.json.every((m: { result?: { isError?: boolean } }) => m.result && !m.result.isError)).toBe(true);
    // The request itself spent one unit when it was authenticated; the batch's other calls spend the rest.
    expect(spent).toEqual([3]);
  });
});

describe('dynamic mode with underscore aliases', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ mcpUnderscoreAliases: true });
  });
  afterAll(async () => {
    await h.close();
  });

  it('lists the meta-tools under their underscore names only (the budget stays), and accepts both names and aliased tools', async () => {
    const client = await h.client('operator', { mode: 'dynamic' });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(service.mcpDynamicTools.map((t) => t.name.replace(/\./g, '_')));
    for (const n of names) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const before = h.calls.length;
    const viaAlias = structured(await client.callTool({ name: META.read.replace(/\./g, '_'), arguments: { tool: 'svc_tasks_get', arguments: { task_id: 't2' } } }));
    expect(viaAlias.outcome).toBe('ran');
    expect(h.calls[before]!.toolName).toBe('svc_tasks_get');
    const dotted = await client.callTool({ name: META.describe, arguments: { tool: 'svc_tasks_get' } });
    expect(structured(dotted).result.tool.name).toBe('svc_tasks_get');
    expect(structured(dotted).result.tool.description).toContain('Alias of svc.tasks.get');
  });
});

describe('a service whose contract has no dynamic mode', () => {
  it('refuses ?mode=dynamic with validation_failed on /mode, and serves the static mode', async () => {
    const h = await startHarness({}, { dynamic: false });
    try {
      const res = await rpc(`${h.url}?mode=dynamic`, 'operator', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(res.status).toBe(422);
      expect(res.json).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/mode', message: expect.stringContaining('no dynamic mode') }] });
      const list = await rpc(h.url, 'operator', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(list.json.result.tools).toHaveLength(fakeTools.length);
    } finally {
      await h.close();
    }
  });
});
