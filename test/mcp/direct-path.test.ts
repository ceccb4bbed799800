// The direct path of /mcp (issue 26): a single tools/call is answered without the SDK's transport and
// Server. It must answer exactly what the SDK path answers: the same request sent with params._meta
// (which the direct path leaves to the SDK) is the reference, byte for byte (request ids aside).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.ts';

const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-11-25' };

async function post(url: string, token: string, message: Record<string, unknown>) {
  const res = await fetch(url, { method: 'POST', headers: { ...headers, Authorization: `Bearer ${token}` }, body: JSON.stringify(message) });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.text()).replace(/req-\d+/g, 'req-N') };
}

function call(id: unknown, name: unknown, args?: unknown, meta?: Record<string, unknown>) {
  const params: Record<string, unknown> = { name };
  if (args !== undefined) params.arguments = args;
  if (meta) params._meta = meta;
  return { jsonrpc: '2.0', id, method: 'tools/call', params };
}

describe('MCP direct tools/call path', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  const cases: [string, string, string, unknown, unknown?][] = [
    ['a read', '', 'operator', 'svc.meta.get', {}],
    ['a read with arguments, a string id', '', 'operator', 'svc.tasks.get', { task_id: 't1' }],
    ['a read without arguments', '', 'reader', 'svc.meta.get'],
    ['a command refused (no idempotencyKey): an isError result', '', 'operator', 'svc.tasks.create', { title: 'x' }],
    ['a command that runs', '', 'operator', 'svc.tasks.create', { title: 'x', idempotencyKey: '7d3b8c0e-93f5-4b5e-9a57-2a3c1f8d4e21' }],
    ['a tool the caller may not call', '', 'reader', 'svc.keys.secret_thing', {}],
    ['an unknown tool: -32602', '', 'operator', 'svc.nothing.here', {}],
    ['arguments that are not an object: -32602', '', 'operator', 'svc.meta.get', [1]],
    ['dynamic mode: search', '?mode=dynamic', 'operator', 'svc.api.search', { query: 'task' }],
    ['dynamic mode: a static tool name is unknown there', '?mode=dynamic', 'operator', 'svc.meta.get', {}],
  ];
  for (const [what, query, token, name, args] of cases) {
    it(`answers ${what} as the SDK path does`, async () => {
      const id = what.includes('string id') ? 'abc' : 7;
      const direct = await post(h.url + query, token, call(id, name, args));
      const viaSdk = await post(h.url + query, token, call(id, name, args, {}));
      expect(direct).toEqual(viaSdk);
      expect(direct.status).toBe(200);
      expect(JSON.parse(direct.body)).toMatchObject({ jsonrpc: '2.0', id });
    });
  }

  it('leaves what it does not serve to the SDK: a wrong Accept is 406, a batch answers both calls', async () => {
    const wrongAccept = await fetch(h.url, { method: 'POST', headers: { ...headers, Accept: 'application/json', Authorization: 'Bearer operator' }, body: JSON.stringify(call(1, 'svc.meta.get', {})) });
    expect(wrongAccept.status).toBe(406);
    const batch = await fetch(h.url, { method: 'POST', headers: { ...headers, Authorization: 'Bearer operator' }, body: JSON.stringify([call(1, 'svc.meta.get', {}), call(2, 'svc.tasks.get', { task_id: 't2' })]) });
    const answers = (await batch.json()) as { id: number; result: { structuredContent: unknown } }[];
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1]!.result.structuredContent).toEqual({ outcome: 'ran', result: { echo: { task_id: 't2' } } });
  });
});
