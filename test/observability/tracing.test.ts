// OpenTelemetry traces (runtime/observability/tracing.ts) with the SDK's InMemorySpanExporter: one
// request produces its span tree under the caller's trace id (server span, validation, transaction,
// handler, event emission; a Tier 2 request's approval creation; an MCP tools/call), the response's
// traceparent names the server span, the webhook attempt that later delivers the request's event
// continues that trace and hands its traceparent to the receiver, and no span carries a body, a
// secret or personal data. With tracing off nothing of this runs. PGlite, and PostgreSQL when
// DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connectMcp, ok } from '../mcp/support.ts';
import { startWebhookWorker } from '../../runtime/events/webhooks/worker.ts';
import { tracing } from '../../runtime/observability/index.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

const exporter = new InMemorySpanExporter();
let s: TestServer;
const received: Record<string, string | string[] | undefined>[] = [];
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.headers);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  s = await startTestServer({ traceExporter: exporter, workersEnabled: false, webhookWorker: false });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

const hex = (bytes: number) => randomUUID().replace(/-/g, '').repeat(2).slice(0, bytes * 2);
const spanId = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const inTrace = (traceId: string) => exporter.getFinishedSpans().filter((sp) => sp.spanContext().traceId === traceId);
function one(spans: ReadableSpan[], name: string, parent?: ReadableSpan): ReadableSpan {
  const found = spans.filter((sp) => sp.name === name && (parent === undefined || parentOf(sp) === spanId(parent)));
  expect(found, `one ${name}${parent ? ` under ${parent.name}` : ''} in ${spans.map((x) => x.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

async function post(path: string, body: unknown, traceparent?: string, key = s.credentials.operatorKey) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() };
  if (traceparent) headers.traceparent = traceparent;
  const res = await fetch(`${s.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, traceparent: res.headers.get('traceparent')!, json: (await res.json()) as Record<string, any> };
}

describe('traces', () => {
  let endpointCreated = false;

  it('tracing is on for this server', () => {
    expect(tracing).not.toBeNull();
  });

  it('a write: server span under the caller, validation, transaction, handler, event emission; the response names the server span', async () => {
    const endpoint = await post('/v1/webhook-endpoints', { url: receiverUrl, eventTypes: ['task.created'], clientId: s.credentials.clientId });
    expect(endpoint.status).toBe(201);
    endpointCreated = true;
    // The fan-out starts after the endpoint: only the next event is delivered.
    const worker = startWebhookWorker({ db: s.database.db }, false);
    await worker.runOnce();

    const traceId = hex(16);
    const callerSpan = hex(8);
    const res = await post('/v1/tasks', { title: 'Traced task', clientId: s.credentials.clientId }, `00-${traceId}-${callerSpan}-01`);
    expect(res.status).toBe(201);
    const [, respTrace, respSpan, respFlags] = res.traceparent.split('-');
    expect(respTrace).toBe(traceId);
    expect(respFlags).toBe('01');

    const spans = inTrace(traceId);
    const server = one(spans, 'POST /v1/tasks');
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(parentOf(server)).toBe(callerSpan);
    expect(server.parentSpanContext?.isRemote).toBe(true);
    expect(spanId(server)).toBe(respSpan);
    expect(server.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/v1/tasks',
      'http.response.status_code': 201,
      'svc.operation': 'tasks.create',
    });
    expect(one(spans, 'svc.validate', server).attributes).toEqual({ 'svc.operation': 'tasks.create' });
    const tx = one(spans, 'db.transaction', server);
    expect(tx.attributes).toMatchObject({ 'db.system': 'postgresql' });
    expect(tx.attributes['svc.db.wait_ms']).toBeGreaterThanOrEqual(0);
    if (process.env.DATABASE_URL) {
      // On PostgreSQL each statement of the write is a span inside its transaction's (PGlite runs in process).
      const statements = spans.filter((sp) => sp.name === 'db.statement').map((sp) => sp.attributes['db.operation.name']);
      expect(statements).toEqual(expect.arrayContaining(['insert', 'with', 'select']));
    }
    const handler = one(spans, 'svc.handler', tx);
    expect(handler.attributes).toEqual({ 'svc.operation': 'tasks.create' });
    const emit = one(spans, 'svc.event.emit', handler);
    expect(emit.attributes).toEqual({ 'svc.event.type': 'task.created' });
    for (const sp of spans) expect(sp.status.code, sp.name).toBe(0); // unset: nothing failed

    // The webhook worker delivers the event later: its attempt continues the trace under the
    // emission, and the receiver gets a traceparent naming the attempt.
    // On PostgreSQL the fan-out takes an event once no older transaction of the cluster is open (another
    // file's long statement may be): run it until the delivery is made, 10 s at most.
    for (let i = 0; i < 200 && received.length === 0; i++) {
      await worker.runOnce();
      if (received.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    await worker.stop();
    expect(received).toHaveLength(1);
    const attempt = one(inTrace(traceId), 'webhook.attempt', emit);
    expect(attempt.kind).toBe(SpanKind.CLIENT);
    expect(attempt.attributes).toEqual({ 'http.request.method': 'POST', 'http.response.status_code': 204 });
    expect(received[0]!.traceparent).toBe(`00-${traceId}-${spanId(attempt)}-01`);
  });

  it('a Tier 2 command: its plan runs in a rolled-back transaction, then the proposal is created in its own', async () => {
    const traceId = hex(16);
    const res = await post('/v1/projects', { clientId: s.credentials.clientId, name: 'Traced project' }, `00-${traceId}-${hex(8)}-01`);
    expect(res.status).toBe(202);
    const spans = inTrace(traceId);
    const server = one(spans, 'POST /v1/projects');
    expect(server.attributes['svc.operation']).toBe('projects.create');
    const transactions = spans.filter((sp) => sp.name === 'db.transaction' && parentOf(sp) === spanId(server));
    expect(transactions).toHaveLength(2);
    const [plan, proposal] = transactions.sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(plan!.attributes['svc.rolled_back']).toBe(true);
    one(spans, 'svc.handler', plan);
    const created = one(spans, 'svc.approval.create', proposal);
    expect(created.attributes).toEqual({ 'svc.operation': 'projects.create', 'svc.approval.tier': 2 });
  });

  it('an MCP request: a tools/call span per call under the server span', async () => {
    const traceId = hex(16);
    const mcp = await connectMcp(s.url, s.credentials.operatorKey);
    try {
      // The SDK client sends the transport's headers on each request; set ours for the call.
      const res = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.credentials.operatorKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          traceparent: `00-${traceId}-${hex(8)}-01`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } }),
      });
      expect(res.status).toBe(200);
      expect(ok((await res.json()).result).outcome).toBe('ran');
      ok(await mcp.call('svc.meta.get'));
    } finally {
      await mcp.close();
    }
    const spans = inTrace(traceId);
    const server = one(spans, 'POST /mcp');
    expect(server.attributes['http.route']).toBe('/mcp');
    const call = one(spans, 'tools/call svc.meta.get', server);
    expect(call.attributes).toEqual({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'svc.meta.get', 'svc.operation': 'meta.get' });
    one(spans, 'svc.handler', call);
  });

  it('without a traceparent a new trace starts, and the response names its server span; an unsampled caller is not recorded', async () => {
    const res = await fetch(`${s.url}/v1/meta`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } });
    const [version, traceId, span, flags] = res.headers.get('traceparent')!.split('-');
    expect([version, flags]).toEqual(['00', '01']);
    const server = one(inTrace(traceId!), 'GET /v1/meta');
    expect(spanId(server)).toBe(span);
    expect(server.parentSpanContext).toBeUndefined();

    const unsampled = hex(16);
    const quiet = await fetch(`${s.url}/v1/meta`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}`, traceparent: `00-${unsampled}-${hex(8)}-00` } });
    expect(quiet.headers.get('traceparent')).toMatch(new RegExp(`^00-${unsampled}-[0-9a-f]{16}-00$`));
    expect(inTrace(unsampled)).toEqual([]);
  });

  it('a refused request is traced with its status; an unknown path has no route', async () => {
    const traceId = hex(16);
    const res = await fetch(`${s.url}/v1/tasks/nope`, { headers: { traceparent: `00-${traceId}-${hex(8)}-01` } });
    expect(res.status).toBe(401);
    const server = one(inTrace(traceId), 'GET /v1/tasks/{task_id}');
    expect(server.attributes).toEqual({ 'http.request.method': 'GET', 'http.route': '/v1/tasks/{task_id}', 'svc.operation': 'tasks.get', 'http.response.status_code': 401 });
    const lost = hex(16);
    expect((await fetch(`${s.url}/no/such/path`, { headers: { traceparent: `00-${lost}-${hex(8)}-01` } })).status).toBe(404);
    const unknown = one(inTrace(lost), 'GET');
    expect(unknown.attributes).toEqual({ 'http.request.method': 'GET', 'http.response.status_code': 404 });
  });

  it('no span carries a body, a credential, an idempotency key, a title or an e-mail; attribute names come from a fixed set', () => {
    expect(endpointCreated).toBe(true);
    const allowed = new Set([
      'http.request.method',
      'http.route',
      'http.response.status_code',
      'svc.operation',
      'db.system',
      'db.operation.name',
      'svc.db.wait_ms',
      'svc.event.type',
      'svc.approval.tier',
      'svc.rolled_back',
      'mcp.method.name',
      'gen_ai.tool.name',
      'error.type',
    ]);
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(20);
    for (const sp of spans) {
      for (const [name, value] of Object.entries(sp.attributes)) {
        expect(allowed.has(name), `${sp.name}: ${name}`).toBe(true);
        const text = String(value);
        for (const bad of ['Traced', s.credentials.operatorKey, 'Bearer', '@', 'whsec_', 'svc_sk_']) expect(text.includes(bad), `${sp.name} ${name}=${text}`).toBe(false);
      }
      expect(sp.events, sp.name).toEqual([]);
    }
  });
});

describe('tracing off', () => {
  it('a server without OTEL_EXPORTER_OTLP_ENDPOINT records nothing and still answers with a traceparent of the caller’s trace', async () => {
    await s.close();
    expect(tracing).toBeNull();
    exporter.reset();
    const plain = await startTestServer({ workersEnabled: false, webhookWorker: false });
    try {
      const traceId = hex(16);
      const res = await fetch(`${plain.url}/v1/meta`, { headers: { authorization: `Bearer ${plain.credentials.operatorKey}`, traceparent: `00-${traceId}-${hex(8)}-01` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('traceparent')).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});
