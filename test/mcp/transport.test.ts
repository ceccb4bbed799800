// The MCP layer alone (runtime/mcp) with a scripted executor: stateless Streamable HTTP with the
// SDK's own Client, tool filtering, argument splitting, result and error shapes, HTTP-level auth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { ProblemError } from '../../runtime/problem-error.ts';
import { splitArguments, underscoreAlias, buildToolTable } from '../../runtime/mcp/index.ts';
import { defaultScript, fakeOperations, fakeTools, startHarness, type Harness } from './harness.ts';
import { probeAuthDiscovery } from './support.ts';
import { postChunked } from '../support/chunked.ts';

const rpcHeaders = (token?: string) => ({
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  ...(token ? { Authorization: `Bearer ${token}` } : {}),
});

async function rpc(url: string, token: string | undefined, body: unknown, extra: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { ...rpcHeaders(token), ...extra }, body: JSON.stringify(body) });
}

describe('MCP transport (scripted executor)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('initializes statelessly with the SDK client and lists the tools the caller may use', async () => {
    const client = await h.client('operator');
    expect(client.getServerVersion()?.name).toBe('svc');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(fakeTools.map((t) => t.name));
    for (const t of tools) {
      const def = fakeTools.find((d) => d.name === t.name)!;
      expect(t.inputSchema).toEqual(def.inputSchema);
      expect(t.outputSchema).toEqual(def.outputSchema);
      expect(t.annotations).toEqual(def.annotations);
      expect(t.title).toBe(def.title);
    }
  });

  it('filters tools/list by scope and audience', async () => {
    const reader = await h.client('reader');
    expect((await reader.listTools()).tools.map((t) => t.name)).toEqual(['svc.meta.get', 'svc.tasks.get']);
    const admin = await h.client('admin');
    // keys.secret_thing is operator-only even with the scope
    expect((await admin.listTools()).tools.map((t) => t.name)).toEqual(['svc.meta.get', 'svc.tasks.create', 'svc.tasks.get']);
  });

  it('answers a read with the outcome envelope as structuredContent and JSON text', async () => {
    const client = await h.client('operator');
    await client.listTools();
    const before = h.calls.length;
    const res = await client.callTool({ name: 'svc.tasks.get', arguments: { task_id: 't1' } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({ outcome: 'ran', result: { echo: { task_id: 't1' } } });
    expect(JSON.parse((res.content as { text: string }[])[0].text)).toEqual(res.structuredContent);
    const call = h.calls[before];
    expect(call.transport).toBe('mcp');
    expect(call.toolName).toBe('svc.tasks.get');
    expect(call.op.id).toBe('tasks.get');
    expect(call.path).toBe('/mcp');
    expect(call.requestId).toMatch(/^req-/);
    expect(call.controls).toEqual({ idempotencyKey: null, ifMatch: null, dryRun: false });
  });

  it('splits the controls out of a command and passes the body envelope through', async () => {
    const client = await h.client('operator');
    await client.listTools();
    const key = randomUUID();
    const before = h.calls.length;
    const ran = await client.callTool({ name: 'svc.tasks.create', arguments: { title: 'x', idempotencyKey: key } });
    expect(ran.structuredContent).toEqual({ outcome: 'ran', result: { title: 'x' } });
    expect(ran._meta?.['svc/status']).toBe(201);
    expect(h.calls[before].input).toEqual({ title: 'x' });
    expect(h.calls[before].controls).toEqual({ idempotencyKey: key, ifMatch: null, dryRun: false });
    const planned = await client.callTool({ name: 'svc.tasks.create', arguments: { title: 'x', idempotencyKey: key, dryRun: true } });
    expect(planned.structuredContent).toMatchObject({ outcome: 'planned' });
    expect(h.calls[before + 1].controls.dryRun).toBe(true);
  });

  it('renders a ProblemError as an isError result the SDK client accepts', async () => {
    const client = await h.client('operator');
    await client.listTools();
    const res = await client.callTool({ name: 'svc.tasks.create', arguments: { title: 'x' } });
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toEqual({
      outcome: 'error',
      error: {
        code: 'idempotency_key_required',
        status: 400,
        title: 'An idempotency key is required',
        detail: 'send idempotencyKey',
        retryable: false,
        errors: [],
      },
    });
    expect(JSON.parse((res.content as { text: string }[])[0].text)).toEqual(res.structuredContent);
  });

  it('carries validation errors with pointers, and refuses ill-typed controls itself', async () => {
    const client = await h.client('operator');
    await client.listTools();
    h.setScript(async () => {
      throw new ProblemError('validation_failed', '/title: must be string', { errors: [{ pointer: '/title', message: 'must be string' }] });
    });
    try {
      const res = await client.callTool({ name: 'svc.tasks.create', arguments: { title: 5, idempotencyKey: randomUUID() } });
      expect(res.isError).toBe(true);
      expect((res.structuredContent as any).error).toMatchObject({ code: 'validation_failed', status: 422, errors: [{ pointer: '/title' }] });
    } finally {
      h.setScript(defaultScript);
    }
    const before = h.calls.length;
    const bad = await client.callTool({ name: 'svc.tasks.create', arguments: { title: 'x', idempotencyKey: 7, dryRun: 'yes' } });
    expect((bad.structuredContent as any).error).toMatchObject({
      code: 'validation_failed',
      errors: [{ pointer: '/idempotencyKey' }, { pointer: '/dryRun' }],
    });
    expect(h.calls.length).toBe(before);
  });

  it('lets the executor refuse a tool the caller may not see (insufficient_scope, audited there)', async () => {
    const client = await h.client('reader');
    await client.listTools();
    const before = h.calls.length;
    const res = await client.callTool({ name: 'svc.tasks.create', arguments: { title: 'x', idempotencyKey: randomUUID() } });
    expect(res.isError).toBe(true);
    expect((res.structuredContent as any).error.code).toBe('insufficient_scope');
    expect(h.calls.length).toBe(before + 1);
  });

  it('answers an unknown tool with JSON-RPC error -32602 (invalid params), not a tool result', async () => {
    const client = await h.client('operator');
    await expect(client.callTool({ name: 'svc.nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('turns an unexpected executor failure into internal_error, never a JSON-RPC error', async () => {
    const client = await h.client('operator');
    await client.listTools();
    h.setScript(async () => {
      throw new TypeError('boom');
    });
    try {
      const res = await client.callTool({ name: 'svc.meta.get', arguments: {} });
      expect(res.isError).toBe(true);
      expect((res.structuredContent as any).error).toMatchObject({ code: 'internal_error', status: 500, retryable: true });
      expect(JSON.stringify(res)).not.toContain('boom');
      expect(h.logs.some((l) => l.includes('boom') && l.includes('/mcp'))).toBe(true);
    } finally {
      h.setScript(defaultScript);
    }
  });

  it('leaves controls in the input of a read (its schema does not declare them)', () => {
    const def = fakeOperations['tasks.get'].mcp!;
    expect(splitArguments(def, { task_id: 'a', dryRun: true })).toEqual({
      input: { task_id: 'a', dryRun: true },
      controls: { idempotencyKey: null, ifMatch: null, dryRun: false },
    });
    expect(() => splitArguments(def, [1])).toThrow(ProblemError);
    expect(splitArguments(def, undefined).input).toEqual({});
  });

  it('401 without a credential, with WWW-Authenticate pointing at the /mcp metadata', async () => {
    const res = await rpc(h.url, undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${h.config.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    const body = await res.json();
    expect(body).toMatchObject({ code: 'unauthorized', status: 401, instance: '/mcp' });
    expect(extractWWWAuthenticateParams(res).resourceMetadataUrl?.href).toBe(
      `${h.config.baseUrl}/.well-known/oauth-protected-resource/mcp`,
    );
  });

  it('401 invalid_token for a refused credential', async () => {
    const res = await rpc(h.url, 'wrong', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(401);
    const params = extractWWWAuthenticateParams(res);
    expect(params.error).toBe('invalid_token');
    expect(params.resourceMetadataUrl?.pathname).toBe('/.well-known/oauth-protected-resource/mcp');
    expect((await res.json()).code).toBe('invalid_token');
  });

  it('503 not_configured with Retry-After', async () => {
    const res = await rpc(h.url, 'no-keys', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect((await res.json()).code).toBe('not_configured');
  });

  it('the SDK client without a credential is sent to /.well-known/oauth-protected-resource/mcp', async () => {
    const seen = await probeAuthDiscovery(h.url);
    expect(seen).toContain(`${h.config.baseUrl}/.well-known/oauth-protected-resource/mcp`);
    // Without an auth provider the client surfaces the 401.
    const bare = new Client({ name: 'anon', version: '1.0.0' });
    await expect(bare.connect(new StreamableHTTPClientTransport(new URL(h.url)))).rejects.toThrow(/401|Unauthorized/i);
  });

  it('GET and DELETE are 405 (stateless: no SSE stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(h.url, { method, headers: { Accept: 'text/event-stream', Authorization: 'Bearer operator' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect((await res.json()).code).toBe('method_not_allowed');
    }
  });

  it('answers malformed JSON with a JSON-RPC parse error, and notifications with 202', async () => {
    const bad = await fetch(h.url, { method: 'POST', headers: rpcHeaders('operator'), body: '{' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe(-32700);
    const note = await rpc(h.url, 'operator', { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(202);
  });

  it('serves tools/list without an initialize on the same HTTP request (stateless)', async () => {
    const res = await rpc(h.url, 'reader', { jsonrpc: '2.0', id: 7, method: 'tools/list' }, { 'MCP-Protocol-Version': '2025-06-18' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.id).toBe(7);
    expect(body.result.tools).toHaveLength(2);
  });

  it('serves only the contract protocol versions', async () => {
    const old = await rpc(h.url, 'operator', {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    expect((await old.json()).result.protocolVersion).toBe('2025-11-25');
    const bad = await rpc(h.url, 'operator', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'MCP-Protocol-Version': '2024-11-05' });
    expect(bad.status).toBe(400);
  });

  it('keeps the app-wide middleware headers on /mcp responses', async () => {
    const res = await rpc(h.url, 'operator', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.headers.get('x-request-id')).toMatch(/^req-/);
    const unauth = await rpc(h.url, undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(unauth.headers.get('x-request-id')).toMatch(/^req-/);
  });
});

describe('underscore aliases', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ mcpUnderscoreAliases: true });
  });
  afterAll(async () => {
    await h.close();
  });

  it('lists svc_x_y aliases beside the dotted names and calls the same operation', async () => {
    const client = await h.client('operator');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('svc.tasks.create');
    expect(names).toContain('svc_tasks_create');
    expect(names.length).toBe(fakeTools.length * 2);
    for (const n of names) if (!n.includes('.')) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const before = h.calls.length;
    const res = await client.callTool({ name: 'svc_tasks_create', arguments: { title: 'a', idempotencyKey: randomUUID() } });
    expect(res.structuredContent).toMatchObject({ outcome: 'ran' });
    expect(h.calls[before].op.id).toBe('tasks.create');
    expect(h.calls[before].toolName).toBe('svc_tasks_create');
  });

  it('is off by default, and a colliding alias is refused at mount', async () => {
    expect(buildToolTable(fakeTools, fakeOperations, false).entries).toHaveLength(fakeTools.length);
    expect(underscoreAlias('svc.tasks.batch_create')).toBe('svc_tasks_batch_create');
    const clash = { ...fakeTools[0], name: 'svc_meta_get' };
    const ops = { ...fakeOperations, x: { ...fakeOperations['meta.get'], id: 'x', mcp: clash } };
    expect(() => buildToolTable([...fakeTools, clash], ops, true)).toThrow(/not unique/);
  });
});

describe('with the shared request authenticator (authenticateRequest)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, { requestAuthenticator: true });
  });
  afterAll(async () => {
    await h.close();
  });

  it('uses it for the caller and answers its rate_limited refusal as a 429 problem', async () => {
    const client = await h.client('operator');
    expect((await client.listTools()).tools.length).toBe(fakeTools.length);
    const res = await rpc(h.url, 'limited', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(await res.json()).toMatchObject({ code: 'rate_limited', retryable: true, instance: '/mcp' });
  });
});

describe('request body limit', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('refuses a JSON-RPC body over the limit with 413 payload_too_large', async () => {
    const big = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: { pad: 'x'.repeat(1_100_000) } } };
    const res = await rpc(h.url, 'operator', big);
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('payload_too_large');
  });

  it('refuses a chunked body over the limit with no Content-Length, reads one within it, and keeps serving', async () => {
    const headers = rpcHeaders('operator') as Record<string, string>;
    const pad = 'x'.repeat(64 * 1024);
    const head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"svc.meta.get","arguments":{"pad":"';
    const big = await postChunked(h.url, headers, [head, ...Array.from({ length: 20 }, () => pad), '"}}}']);
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body).code).toBe('payload_too_large');
    const small = await postChunked(h.url, headers, ['{"jsonrpc":"2.0","id":2,', '"method":"tools/list"}']);
    expect(small.status).toBe(200);
    expect(JSON.parse(small.body).result.tools.length).toBeGreaterThan(0);
  });
});
