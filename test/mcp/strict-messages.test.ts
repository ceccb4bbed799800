// Issue 39: the direct path of /mcp refuses what the SDK refuses. The SDK's Streamable HTTP transport
// parses each message with its strict JSON-RPC schemas (no unknown member, no result or error beside
// method) and refuses a message that fails with 400 and a JSON-RPC error; before the fix the direct
// path answered such a tools/call by running the tool, a write included.
//
// Each malformed request goes three ways: to /mcp as the direct path takes it, to /mcp with
// params._meta (which leaves it to the SDK path of /mcp), and to a bare SDK transport and Server built
// here (the reference). The three answers are equal (status, content type, JSON-RPC body) and the
// executor never sees the call: the write does not run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHarness, type Harness } from './harness.ts';

const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-11-25' };

interface Answer {
  status: number;
  type: string | null;
  body: unknown;
}

async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), body: text === '' ? null : JSON.parse(text) };
}

async function viaMcp(url: string, message: unknown): Promise<Answer> {
  return answerOf(await fetch(url, { method: 'POST', headers: { ...headers, Authorization: 'Bearer operator' }, body: JSON.stringify(message) }));
}

/** The SDK alone: a fresh stateless transport and Server whose tools/call handler records that it ran. */
async function viaSdk(message: unknown, ran: string[]): Promise<Answer> {
  const server = new Server({ name: 'reference', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    ran.push(request.params.name);
    return { content: [{ type: 'text', text: 'ran' }] };
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const request = new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body: JSON.stringify(message) });
    return await answerOf(await transport.handleRequest(request));
  } finally {
    await server.close();
  }
}

const write = { name: 'svc.tasks.create', arguments: { title: 'must not be written', idempotencyKey: '0f5c2d6e-8a41-4c3b-9e7f-1d2a3b4c5d6e' } };
const base = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: write };

const malformed: [string, Record<string, unknown>][] = [
  ['an unknown top-level member', { ...base, extra: true }],
  ['a result beside method', { ...base, result: {} }],
  ['an error beside method', { ...base, error: { code: -32000, message: 'x' } }],
  ['result and error beside method', { ...base, result: {}, error: { code: -32000, message: 'x' } }],
  ['an unknown member named like a JSON-RPC 1.0 one', { ...base, version: '1.1' }],
];

describe('/mcp refuses what the SDK refuses (issue 39)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  for (const [what, message] of malformed) {
    it(`${what}: the direct path answers as the SDK does, and the write does not run`, async () => {
      const before = h.calls.length;
      const ran: string[] = [];
      const reference = await viaSdk(message, ran);
      const direct = await viaMcp(h.url, message);
      const sdkPath = await viaMcp(h.url, { ...message, params: { ...write, _meta: {} } });
      expect(reference.status).toBe(400);
      expect(reference.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      expect(direct).toEqual(reference);
      expect(sdkPath).toEqual(reference);
      expect(ran, 'the SDK ran nothing').toEqual([]);
      expect(h.calls.length, 'the executor was never called').toBe(before);
    });
  }

  it('the well-formed request still takes the direct path and runs (the same answer as the SDK path of /mcp)', async () => {
    const before = h.calls.length;
    const direct = await viaMcp(h.url, base);
    expect(direct.status).toBe(200);
    expect(direct.body).toMatchObject({ jsonrpc: '2.0', id: 9, result: { structuredContent: { outcome: 'ran' } } });
    expect(h.calls.length).toBe(before + 1);
    const ran: string[] = [];
    expect((await viaSdk(base, ran)).status).toBe(200);
    expect(ran).toEqual(['svc.tasks.create']);
  });
});
