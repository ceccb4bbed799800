// The Prometheus metrics (runtime/observability) end to end: a server with its metrics listener on a
// free loopback port takes a scripted mix of REST and MCP calls (reads, writes, replays, dry runs,
// Tier 2 proposals, refusals of every kind, an idempotency key still in progress, the three rate
// limits, event streams) and a webhook to a receiver that always fails, driven through its whole
// retry schedule. /metrics is parsed by the text format's rules (test/support/prom-text.ts) before
// and after, and every counter and gauge must have moved by exactly what was done. Every label value
// is scanned for ids, keys, e-mail addresses and client names. The public port never serves metrics.
// PGlite, and PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '../support/server.ts';
import { labelValues, parseExposition, sampleValue, type Family } from '../support/prom-text.ts';
import { connectMcp, ok, toolError, type McpSession } from '../mcp/support.ts';
import { openSse } from '../support/sse.ts';
import { startWebhookWorker } from '../../runtime/events/webhooks/worker.ts';
import { RETRY_DELAYS_MS } from '../../runtime/events/webhooks/deliveries.ts';
import { observabilityConfigFrom } from '../../runtime/observability/config.ts';
import { operationsById, service } from '../../generated/registry.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

const RATE_LIMIT = 120;
const metricsOn = { ...observabilityConfigFrom({}, 8787), metricsPort: 0 };

let s: TestServer;
let receiver: { url: string; hits: number; close(): Promise<void> };

async function failingReceiver(): Promise<typeof receiver> {
  const r: typeof receiver = { url: '', hits: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      r.hits++;
      res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}

beforeAll(async () => {
  receiver = await failingReceiver();
  // No background workers and no webhook worker: the test drives the worker, and nothing else opens
  // a transaction while it counts them.
  s = await startTestServer({ observability: metricsOn, rateLimitPerMinute: RATE_LIMIT, workersEnabled: false, webhookWorker: false });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await receiver?.close();
});

async function scrape(url = s.metricsUrl!): Promise<Map<string, Family>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
  return parseExposition(await res.text());
}

async function rest(method: string, path: string, options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}) {
  const key = options.key === undefined ? s.credentials.operatorKey : options.key;
  const headers: Record<string, string> = { ...options.headers };
  if (key) headers.authorization = `Bearer ${key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${s.url}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, any> };
}

/** Every series of a family, by its label values, so a whole family's deltas can be compared. */
function series(families: Map<string, Family>, name: string): Map<string, number> {
  const out = new Map<string, number>();
  const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
  for (const sample of family?.samples ?? []) if (sample.name === name) out.set(JSON.stringify(sample.labels), sample.value);
  return out;
}
function deltas(before: Map<string, Family>, after: Map<string, Family>, name: string): Record<string, number> {
  const a = series(before, name);
  const b = series(after, name);
  const out: Record<string, number> = {};
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}
const call = (operation: string, transport: string, statusClass: string, outcome: string) => JSON.stringify({ operation, transport, status_class: statusClass, outcome });

describe('the Prometheus text format reader refuses what the format forbids', () => {
  it.each([
    ['a sample without a value', 'a_total\n'],
    ['a bad escape', '# TYPE a gauge\na{x="\\t"} 1\n'],
    ['a series twice', '# TYPE a gauge\na{x="1"} 1\na{x="1"} 2\n'],
    ['TYPE after samples', 'a 1\n# TYPE a gauge\n'],
    ['a histogram whose count differs from +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n'],
    ['decreasing buckets', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ['split families', '# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x="y"} 1\n'],
    ['a label name starting with __', 'a{__x="1"} 1\n'],
  ])('%s', (_, text) => {
    expect(() => parseExposition(text)).toThrow();
  });
  it('reads escapes and special values', () => {
    const f = parseExposition('# HELP a x\\ny\n# TYPE a gauge\na{v="q\\"\\\\\\n"} +Inf\nb NaN 123\n');
    expect(f.get('a')!.samples[0]).toEqual({ name: 'a', labels: { v: 'q"\\\n' }, value: Infinity });
    expect(f.get('a')!.help).toBe('x\ny');
    expect(Number.isNaN(f.get('b')!.samples[0]!.value)).toBe(true);
  });
});

describe('SVC_METRICS_PORT', () => {
  it('is off unless set, refuses the public port, binds loopback unless told', () => {
    expect(observabilityConfigFrom({}, 8787)).toEqual({ metricsPort: null, metricsHost: '127.0.0.1', metricsToken: null, tracing: false, horizon: { warnSeconds: 10, checkSeconds: 5 } });
    expect(observabilityConfigFrom({ SVC_HORIZON_WARN_SECONDS: '0.5', SVC_HORIZON_CHECK_SECONDS: '2' }, 8787).horizon).toEqual({ warnSeconds: 0.5, checkSeconds: 2 });
    for (const bad of ['0', '-1', 'ten']) expect(() => observabilityConfigFrom({ SVC_HORIZON_WARN_SECONDS: bad }, 8787)).toThrow(/SVC_HORIZON_WARN_SECONDS must be a number of seconds above 0/);
    expect(() => observabilityConfigFrom({ SVC_HORIZON_CHECK_SECONDS: '0' }, 8787)).toThrow(/SVC_HORIZON_CHECK_SECONDS/);
    expect(() => observabilityConfigFrom({ SVC_METRICS_PORT: '8787' }, 8787)).toThrow(/must differ from PORT/);
    expect(() => observabilityConfigFrom({ SVC_METRICS_PORT: 'x' }, 8787)).toThrow(/port number/);
    expect(observabilityConfigFrom({ SVC_METRICS_PORT: '9464', SVC_METRICS_HOST: '0.0.0.0', SVC_METRICS_TOKEN: 't' }, 8787)).toMatchObject({ metricsPort: 9464, metricsHost: '0.0.0.0', metricsToken: 't' });
    expect(observabilityConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 8787).tracing).toBe(true);
    expect(observabilityConfigFrom({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, 8787).tracing).toBe(true);
    expect(observabilityConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }, 8787).tracing).toBe(false);
    expect(observabilityConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }, 8787).tracing).toBe(false);
  });
});

describe('metrics after a scripted mix of calls', () => {
  let before: Map<string, Family>;
  let after: Map<string, Family>;
  const idempotencyKeys: string[] = [];
  const created: string[] = [];
  let failedAuthRefusals = 0;

  it('the public port refuses /metrics to anyone, anonymous or operator; the listener serves /metrics only', async () => {
    const anonymous = await rest('GET', '/metrics', { key: null });
    expect(anonymous.status).toBe(404);
    expect(anonymous.text).not.toContain('svc_requests_total');
    const operator = await rest('GET', '/metrics');
    expect(operator.status).toBe(404);
    expect(operator.text).not.toContain('svc_requests_total');
    expect(new URL(s.metricsUrl!).hostname).toBe('127.0.0.1');
    expect((await fetch(s.metricsUrl!.replace('/metrics', '/'))).status).toBe(404);
    expect((await fetch(s.metricsUrl!, { method: 'POST' })).status).toBe(405);
  });

  it('runs the mix', async () => {
    // Fan out what the seed emitted first, so the outbox backlog counts only this test's events.
    let clock = Date.now();
    const worker = startWebhookWorker({ db: s.database.db, now: () => new Date(clock) }, false);
    await worker.runOnce();
    before = await scrape();
    expect(sampleValue(before, 'svc_events_outbox_backlog')).toBe(0);
    expect(sampleValue(before, 'svc_events_outbox_lag_seconds')).toBe(0);
    const { clientId } = s.credentials;

    // REST reads, and refusals without a credential.
    for (let i = 0; i < 3; i++) expect((await rest('GET', '/v1/meta')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await rest('GET', '/v1/meta', { key: null })).status).toBe(401);

    // REST writes: ran, replayed, dry run, refused (validation), proposed (Tier 2).
    const k1 = randomUUID();
    idempotencyKeys.push(k1);
    const task = { title: 'metrics one', clientId };
    const first = await rest('POST', '/v1/tasks', { body: task, headers: { 'idempotency-key': k1 } });
    expect(first.status).toBe(201);
    created.push(first.json().result.id);
    const again = await rest('POST', '/v1/tasks', { body: task, headers: { 'idempotency-key': k1 } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect((await rest('POST', '/v1/tasks', { body: task, headers: { prefer: 'dry-run' } })).status).toBe(200);
    expect((await rest('POST', '/v1/tasks', { body: { clientId }, headers: { 'idempotency-key': randomUUID() } })).status).toBe(422);
    expect((await rest('POST', '/v1/projects', { body: { clientId, name: 'metrics project' }, headers: { 'idempotency-key': randomUUID() } })).status).toBe(202);

    // A key whose first request is still being served: 409 idempotency_key_in_progress.
    const k2 = randomUUID();
    idempotencyKeys.push(k2);
    const second = await rest('POST', '/v1/tasks', { body: { title: 'metrics two', clientId }, headers: { 'idempotency-key': k2 } });
    expect(second.status).toBe(201);
    created.push(second.json().result.id);
    await s.database.execute(`update idempotency_records set state = 'in_progress', holder = 'elsewhere', lease_until = now() + interval '1 hour' where key = '${k2}'`);
    const busy = await rest('POST', '/v1/tasks', { body: { title: 'metrics two', clientId }, headers: { 'idempotency-key': k2 } });
    expect(busy.status).toBe(409);
    expect(busy.json().code).toBe('idempotency_key_in_progress');

    // MCP: the SDK's own client.
    const mcp: McpSession = await connectMcp(s.url, s.credentials.operatorKey);
    try {
      for (let i = 0; i < 2; i++) ok(await mcp.call('svc.meta.get'));
      const k3 = randomUUID();
      idempotencyKeys.push(k3);
      const made = ok(await mcp.call('svc.tasks.create', { title: 'metrics three', clientId, idempotencyKey: k3 }));
      created.push(made.result.id);
      const replayed = await mcp.call('svc.tasks.create', { title: 'metrics three', clientId, idempotencyKey: k3 });
      expect((replayed._meta as Record<string, unknown>)['svc/idempotencyReplayed']).toBe(true);
      expect(ok(await mcp.call('svc.tasks.create', { title: 'metrics plan', clientId, dryRun: true })).outcome).toBe('planned');
      expect(toolError(await mcp.call('svc.tasks.create', { title: 5, clientId, idempotencyKey: randomUUID() })).code).toBe('validation_failed');
      expect(ok(await mcp.call('svc.projects.create', { clientId, name: 'metrics mcp project', idempotencyKey: randomUUID() })).outcome).toBe('proposed');
    } finally {
      await mcp.close();
    }
    const anonymousMcp = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } }),
    });
    expect(anonymousMcp.status).toBe(401);

    // The credential's window: the service key's RATE_LIMIT requests pass, the next is refused.
    for (let i = 0; i < RATE_LIMIT; i++) expect((await rest('GET', '/v1/meta', { key: s.credentials.serviceKey })).status).toBe(200);
    expect((await rest('GET', '/v1/meta', { key: s.credentials.serviceKey })).status).toBe(429);

    // Event streams: the credential's five are open (the gauge says so), the sixth is refused.
    const streams = [];
    for (let i = 0; i < service.limits.eventStreamsPerCredential; i++) {
      const sse = await openSse(`${s.url}/v1/events:stream`, s.credentials.operatorKey);
      expect(sse.status).toBe(200);
      streams.push(sse);
    }
    expect(sampleValue(await scrape(), 'svc_event_streams_open')).toBe(service.limits.eventStreamsPerCredential);
    const sixth = await openSse(`${s.url}/v1/events:stream`, s.credentials.operatorKey);
    expect(sixth.status).toBe(429);
    sixth.close();
    for (const sse of streams) sse.close();
    for (let i = 0; i < 100 && sampleValue(await scrape(), 'svc_event_streams_open') !== 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(sampleValue(await scrape(), 'svc_event_streams_open')).toBe(0);

    // A webhook endpoint whose receiver always answers 500, and one event for it.
    const endpoint = await rest('POST', '/v1/webhook-endpoints', {
      body: { url: receiver.url, eventTypes: ['task.created'], clientId },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const hooked = await rest('POST', '/v1/tasks', { body: { title: 'metrics hooked', clientId }, headers: { 'idempotency-key': randomUUID() } });
    expect(hooked.status).toBe(201);
    created.push(hooked.json().result.id);
    // Four task.created events wait for the fan-out (the three tasks above and this one).
    const waiting = await scrape();
    expect(sampleValue(waiting, 'svc_events_outbox_backlog')).toBe(4);
    expect(sampleValue(waiting, 'svc_events_outbox_lag_seconds')).toBeGreaterThan(0);
    expect(sampleValue(waiting, 'svc_webhook_deliveries', { state: 'pending' })).toBe(0);
    // The worker fans them out (one delivery: the endpoint sees only events after its creation) and
    // makes the first attempt; then every retry of the schedule, on the test's clock.
    await worker.runOnce();
    expect(receiver.hits).toBe(1);
    const failing = await scrape();
    expect(sampleValue(failing, 'svc_events_outbox_backlog')).toBe(0);
    expect(sampleValue(failing, 'svc_events_outbox_lag_seconds')).toBe(0);
    expect(sampleValue(failing, 'svc_webhook_deliveries', { state: 'failed' })).toBe(1);
    expect(sampleValue(failing, 'svc_webhook_deliveries', { state: 'dead' })).toBe(0);
    for (let attempt = 1; attempt < RETRY_DELAYS_MS.length; attempt++) {
      clock += RETRY_DELAYS_MS[attempt]! + 1000;
      await worker.runOnce();
    }
    expect(receiver.hits).toBe(RETRY_DELAYS_MS.length);
    await worker.stop();

    // Last: an address that keeps failing authentication is refused before any lookup.
    for (;;) {
      const res = await rest('GET', '/v1/meta', { key: 'svc_sk_test_not_a_real_key_at_all_000000000000' });
      if (res.status === 429) break;
      expect(res.status).toBe(401);
      failedAuthRefusals++;
    }
    await s.flushAudit();
    after = await scrape();
  });

  it('svc_requests_total and svc_request_duration_seconds moved by exactly the calls made, labelled by operation, transport, status class and outcome', () => {
    // The three anonymous calls of the mix (two REST, one MCP) failed authentication too.
    const expected: Record<string, number> = {
      [call('meta.get', 'rest', '2xx', 'ran')]: 3 + RATE_LIMIT,
      [call('meta.get', 'rest', '4xx', 'refused')]: 2 + 1 + failedAuthRefusals + 1,
      [call('tasks.create', 'rest', '2xx', 'ran')]: 3,
      [call('tasks.create', 'rest', '2xx', 'replayed')]: 1,
      [call('tasks.create', 'rest', '2xx', 'dry_run')]: 1,
      [call('tasks.create', 'rest', '4xx', 'refused')]: 2,
      [call('projects.create', 'rest', '2xx', 'proposed')]: 1,
      [call('meta.get', 'mcp', '2xx', 'ran')]: 2,
      [call('tasks.create', 'mcp', '2xx', 'ran')]: 1,
      [call('tasks.create', 'mcp', '2xx', 'replayed')]: 1,
      [call('tasks.create', 'mcp', '2xx', 'dry_run')]: 1,
      [call('tasks.create', 'mcp', '4xx', 'refused')]: 1,
      [call('projects.create', 'mcp', '2xx', 'proposed')]: 1,
      [call('none', 'mcp', '4xx', 'refused')]: 1,
      [call('events.stream', 'rest', '2xx', 'ran')]: service.limits.eventStreamsPerCredential,
      [call('events.stream', 'rest', '4xx', 'refused')]: 1,
      [call('webhooks.endpoint.create', 'rest', '2xx', 'ran')]: 1,
    };
    expect(deltas(before, after, 'svc_requests_total')).toEqual(expected);
    expect(deltas(before, after, 'svc_request_duration_seconds_count')).toEqual(expected);
    const sums = deltas(before, after, 'svc_request_duration_seconds_sum');
    for (const key of Object.keys(expected)) expect(sums[key]).toBeGreaterThan(0);
  });

  it('the idempotency, rate-limit, event, webhook, approval and transaction metrics moved by exactly as much', () => {
    expect(deltas(before, after, 'svc_idempotency_replays_total')).toEqual({ [JSON.stringify({ transport: 'rest' })]: 1, [JSON.stringify({ transport: 'mcp' })]: 1 });
    expect(deltas(before, after, 'svc_idempotency_in_progress_total')).toEqual({ [JSON.stringify({ transport: 'rest' })]: 1 });
    expect(deltas(before, after, 'svc_rate_limit_refusals_total')).toEqual({
      [JSON.stringify({ limit: 'credential' })]: 1,
      [JSON.stringify({ limit: 'event_streams' })]: 1,
      [JSON.stringify({ limit: 'failed_auth' })]: 1,
    });
    expect(deltas(before, after, 'svc_rate_limit_redis_fallbacks_total')).toEqual({});
    expect(deltas(before, after, 'svc_events_emitted_total')).toEqual({ [JSON.stringify({ type: 'task.created' })]: created.length });
    expect(deltas(before, after, 'svc_webhook_attempts_total')).toEqual({ [JSON.stringify({ result: 'failure' })]: RETRY_DELAYS_MS.length });
    expect(deltas(before, after, 'svc_webhook_attempt_duration_seconds_count')).toEqual({ [JSON.stringify({ result: 'failure' })]: RETRY_DELAYS_MS.length });
    expect(sampleValue(after, 'svc_webhook_deliveries', { state: 'pending' })).toBe(0);
    expect(sampleValue(after, 'svc_webhook_deliveries', { state: 'failed' })).toBe(0);
    expect(sampleValue(after, 'svc_webhook_deliveries', { state: 'dead' })).toBe(1);
    expect(sampleValue(after, 'svc_approvals_pending', { tier: '2' }) - sampleValue(before, 'svc_approvals_pending', { tier: '2' })).toBe(2);
    expect(sampleValue(after, 'svc_approvals_pending', { tier: '3' })).toBe(sampleValue(before, 'svc_approvals_pending', { tier: '3' }));
    // Transactions through the pipeline: each write that ran (four tasks, the endpoint) and each
    // proposal commits; each dry run and each proposal's plan (run first, rolled back) rolls back,
    // and so does each Tier 1 retry that found its key taken (two replays, the 409): a Tier 1 write
    // claims its key inside its transaction (docs/writes.md), which then ends with nothing done.
    expect(deltas(before, after, 'svc_db_transaction_duration_seconds_count')).toEqual({
      [JSON.stringify({ result: 'commit' })]: created.length + 1 + 2,
      [JSON.stringify({ result: 'rollback' })]: 2 + 2 + 3,
    });
    expect(deltas(before, after, 'svc_db_transaction_wait_seconds_count')).toEqual({ '{}': created.length + 1 + 2 + 2 + 2 + 3 });
    expect(sampleValue(after, 'svc_db_transactions', { state: 'active' })).toBe(0);
    expect(sampleValue(after, 'svc_db_transactions', { state: 'waiting' })).toBe(0);
    expect(sampleValue(after, 'svc_metrics_database_read_failures_total')).toBe(0);
  });

  it("the process's default Node metrics are there", () => {
    for (const name of ['process_cpu_user_seconds_total', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_gc_duration_seconds', 'process_resident_memory_bytes']) {
      expect(after.has(name), name).toBe(true);
    }
    expect(sampleValue(after, 'svc_build_info', { contract_version: service.contractVersion, api_version: service.apiVersion })).toBe(1);
  });

  it('no label value carries an id, a key, an e-mail address or a client name; svc_* labels come from fixed vocabularies', async () => {
    const names = (await s.database.execute<{ v: string }>(`select name as v from clients union select name from users union select email from users union select id from clients union select id from users`)).map((r) => r.v);
    const secrets = [...Object.values(s.credentials).filter((v): v is string => typeof v === 'string'), ...idempotencyKeys, ...created];
    const ID = /\b[a-z]{2,8}_[a-z0-9]{16,}\b/i; // svc's ids: a prefix and 20 random characters (runtime/data/ids.ts)
    const KEY = /svc_sk_|whsec_|Bearer/i;
    const EMAIL = /[^\s@]+@[^\s@]+\.[^\s@]+/;
    const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
    const vocab: Record<string, Set<string>> = {
      operation: new Set([...Object.keys(operationsById), 'none']),
      transport: new Set(['rest', 'mcp']),
      status_class: new Set(['1xx', '2xx', '3xx', '4xx', '5xx']),
      outcome: new Set(['ran', 'proposed', 'replayed', 'dry_run', 'refused', 'error']),
      limit: new Set(['credential', 'failed_auth', 'event_streams']),
      type: new Set(service.eventTypes),
      result: new Set(['success', 'failure', 'commit', 'rollback']),
      state: new Set(['active', 'waiting', 'pending', 'failed', 'dead']),
      tier: new Set(['2', '3']),
      kind: new Set(['session', 'prepared']),
      contract_version: new Set([service.contractVersion]),
      api_version: new Set([service.apiVersion]),
    };
    const all = labelValues(after);
    expect(all.length).toBeGreaterThan(100);
    for (const { metric, label, value } of all) {
      const where = `${metric}{${label}="${value}"}`;
      if (metric.startsWith('svc_') && label !== 'le') {
        expect(vocab[label], `${where}: a label svc does not define`).toBeDefined();
        expect(vocab[label]!.has(value), `${where}: not in the ${label} vocabulary`).toBe(true);
      }
      // Operation ids and event types are dotted words (tasks.create); nothing else may look like an id.
      if (!(label === 'operation' || label === 'type')) expect(ID.test(value), `${where} looks like an id`).toBe(false);
      expect(KEY.test(value), where).toBe(false);
      expect(EMAIL.test(value), where).toBe(false);
      expect(UUID.test(value), where).toBe(false);
      for (const secret of [...secrets, ...names].filter((x) => x.length >= 4)) expect(value.includes(secret), `${where} holds ${secret}`).toBe(false);
    }
  });
});

describe('a second server in the process: SVC_METRICS_TOKEN, and Redis limiter fallbacks', () => {
  let t: TestServer;
  beforeAll(async () => {
    // Redis on a port nobody listens on: every request is counted by the process's own window.
    t = await startTestServer({ observability: { ...metricsOn, metricsToken: 'scrape-token' }, redisUrl: 'redis://127.0.0.1:1', workersEnabled: false, webhookWorker: false });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('the listener answers only the bearer token when one is set', async () => {
    expect((await fetch(t.metricsUrl!)).status).toBe(401);
    expect((await fetch(t.metricsUrl!, { headers: { authorization: 'Bearer wrong-token!' } })).status).toBe(401);
    expect((await fetch(t.metricsUrl!, { headers: { authorization: 'Bearer scrape-token' } })).status).toBe(200);
  });

  it('counts each request the per-process window served for Redis', async () => {
    const read = async () => parseExposition(await (await fetch(t.metricsUrl!, { headers: { authorization: 'Bearer scrape-token' } })).text());
    const before = await read();
    for (let i = 0; i < 3; i++) expect((await fetch(`${t.url}/v1/meta`, { headers: { authorization: `Bearer ${t.credentials.operatorKey}` } })).status).toBe(200);
    const after = await read();
    expect(sampleValue(after, 'svc_rate_limit_redis_fallbacks_total') - sampleValue(before, 'svc_rate_limit_redis_fallbacks_total')).toBe(3);
  });
});
