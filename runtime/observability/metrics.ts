// The Prometheus metrics of one process (prom-client), loaded only when SVC_METRICS_PORT is set.
// Every metric, label and value is listed in docs/observability.md. Labels never carry a client,
// user, key, credential or any other id (cardinality and privacy): operation ids, transports,
// status classes, outcomes, event types, tiers and a few fixed words only.
//
// Counters and histograms move on the request path (a label lookup each, under a microsecond);
// gauges that need a query (approvals pending, webhook backlog, outbox lag, the feed's horizon) are computed when
// Prometheus scrapes, by database-gauges.ts, never on the request path.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { problemStatus, toProblemError } from '../problem-documents.ts';
import type { CallResult } from '../pipeline/types.ts';
import type { MetricsHooks, RateLimitKind, Transport } from './index.ts';
import { dbStats } from './database.ts';
import { readDatabaseGauges, type DatabaseGauges } from './database-gauges.ts';
import type { Database } from '../data/client.ts';

/** Request latency buckets, in seconds (a cached read answers in well under a millisecond). */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]; // not a contract limit
/** Database waits and transactions, and webhook attempts (up to the 10 s attempt timeout). */
const DB_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const WEBHOOK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]; // not a contract limit

export type Outcome = 'ran' | 'proposed' | 'replayed' | 'dry_run' | 'refused' | 'error';

/** The outcome label of a call: a replayed answer (a stored problem too) is `replayed`; a problem is `refused` below 500, else `error`. */
export function outcomeOf(result: CallResult | null, err: unknown): { status: number; outcome: Outcome; code: string | null } {
  if (result) {
    const replayed = result.headers['Idempotency-Replayed'] === 'true';
    const outcome: Outcome = replayed ? 'replayed' : result.outcome === 'planned' ? 'dry_run' : result.outcome === 'proposed' ? 'proposed' : 'ran';
    return { status: result.status, outcome, code: null };
  }
  const problem = toProblemError(err);
  const status = problemStatus(err);
  if (problem.headers['Idempotency-Replayed'] === 'true') return { status, outcome: 'replayed', code: problem.code };
  return { status, outcome: status >= 500 ? 'error' : 'refused', code: problem.code };
}

export interface ProcessMetrics {
  registry: Registry;
  hooks: MetricsHooks;
  /** The database the scrape-time gauges read (the newest server's), or null: they are left out. */
  useDatabase(database: Database | null, options: { webhooksEnabled: boolean }): void;
  /** The gauges of open event streams and others kept in this process, read at scrape time. */
  setOpenStreams(read: () => number): void;
}

let made: ProcessMetrics | null = null;

/** The process's registry and hooks (made once; start.ts switches the hooks on and off). */
export function processMetrics(info: { contractVersion: string; apiVersion: string; eventTypes: readonly string[] }): ProcessMetrics {
  if (made) return made;
  const registry = new Registry();
  // Event-loop lag, heap, GC, CPU, file descriptors: prom-client's default set, unprefixed.
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  new Gauge({
    name: 'svc_build_info',
    help: 'Always 1; the labels say which contract this process serves.',
    labelNames: ['contract_version', 'api_version'],
    registers,
  }).set({ contract_version: info.contractVersion, api_version: info.apiVersion }, 1);

  const callLabels = ['operation', 'transport', 'status_class', 'outcome'] as const;
  const requests = new Counter({
    name: 'svc_requests_total',
    help: 'Operation calls (a REST request to an operation route, an MCP tools/call, or an MCP request refused at authentication with operation="none").',
    labelNames: callLabels,
    registers,
  });
  const duration = new Histogram({
    name: 'svc_request_duration_seconds',
    help: 'Time from the start of an operation call to its answer (REST: the whole request; MCP: one tools/call).',
    labelNames: callLabels,
    buckets: REQUEST_BUCKETS,
    registers,
  });
  const replays = new Counter({ name: 'svc_idempotency_replays_total', help: 'Answers replayed from an idempotency record (Idempotency-Replayed: true).', labelNames: ['transport'], registers });
  const inProgress = new Counter({
    name: 'svc_idempotency_in_progress_total',
    help: 'Calls refused 409 idempotency_key_in_progress: the same key was still being served.',
    labelNames: ['transport'],
    registers,
  });
  const rateLimited = new Counter({ name: 'svc_rate_limit_refusals_total', help: 'Requests refused 429 rate_limited, by the limit that refused them.', labelNames: ['limit'], registers });
  const fallbacks = new Counter({
    name: 'svc_rate_limit_redis_fallbacks_total',
    help: "Requests counted by this process's own window because Redis (REDIS_URL) did not answer.",
    registers,
  });
  const emitted = new Counter({ name: 'svc_events_emitted_total', help: 'Domain events committed to the outbox by this process, by type.', labelNames: ['type'], registers });
  const attempts = new Counter({ name: 'svc_webhook_attempts_total', help: 'Webhook delivery attempts made by this process.', labelNames: ['result'], registers });
  const attemptSeconds = new Histogram({ name: 'svc_webhook_attempt_duration_seconds', help: 'Time a webhook attempt took, to its answer or failure.', labelNames: ['result'], buckets: WEBHOOK_BUCKETS, registers });
  const txWait = new Histogram({
    name: 'svc_db_transaction_wait_seconds',
    help: 'Time a transaction waited for its connection and BEGIN (PGlite: its turn on the one connection).',
    buckets: DB_BUCKETS,
    registers,
  });
  const txRun = new Histogram({ name: 'svc_db_transaction_duration_seconds', help: 'Time a transaction ran, BEGIN to COMMIT or ROLLBACK.', labelNames: ['result'], buckets: DB_BUCKETS, registers });
  new Gauge({
    name: 'svc_db_transactions',
    help: 'Transactions of this process now: holding a connection (active) or waiting for one (waiting).',
    labelNames: ['state'],
    registers,
    collect() {
      this.set({ state: 'active' }, dbStats.active);
      this.set({ state: 'waiting' }, dbStats.waiting);
    },
  });
  let openStreams: () => number = () => 0;
  new Gauge({
    name: 'svc_event_streams_open',
    help: 'Server-Sent Events streams (events.stream) open in this process.',
    registers,
    collect() {
      this.set(openStreams());
    },
  });

  // Database-wide gauges: one read a scrape, shared by the gauges below (single flight).
  let database: Database | null = null;
  let webhooksEnabled = true;
  let reading: Promise<DatabaseGauges | null> | null = null;
  const scrapeRead = () =>
    (reading ??= (database ? readDatabaseGauges(database) : Promise.resolve(null))
      .catch(() => {
        scrapeFailures.inc();
        return null;
      })
      .finally(() => setImmediate(() => (reading = null))));
  const scrapeFailures = new Counter({ name: 'svc_metrics_database_read_failures_total', help: 'Scrapes whose database-wide gauges could not be read (they are left out of that scrape).', registers });
  /** A database-wide gauge: its series set from one scrape's read (none when it failed or `when` says so). */
  const databaseGauge = (name: string, help: string, labelNames: string[], series: (g: DatabaseGauges) => [Record<string, string>, number][], when = () => true) =>
    new Gauge({
      name,
      help: `Database-wide: ${help} Every process reports the same value.`,
      labelNames,
      registers,
      async collect() {
        this.reset();
        const g = await scrapeRead();
        if (g && when()) for (const [labels, value] of series(g)) this.set(labels, value);
      },
    });
  databaseGauge('svc_approvals_pending', 'proposals waiting for a decision (not expired), by tier.', ['tier'], (g) => Object.entries(g.approvalsPending).map(([tier, n]) => [{ tier }, n]));
  databaseGauge(
    'svc_webhook_deliveries',
    'webhook deliveries by state: pending (not yet tried), failed (last attempt failed, a retry is scheduled), dead (no attempt left).',
    ['state'],
    (g) => Object.entries(g.deliveries).map(([state, n]) => [{ state }, n]),
  );
  const whenWebhooks = () => webhooksEnabled;
  databaseGauge('svc_events_outbox_lag_seconds', 'age of the oldest event not yet fanned out to webhook deliveries (0 when none waits); left out when webhooks are off.', [], (g) => [[{}, g.outboxLagSeconds]], whenWebhooks);
  databaseGauge(
    'svc_events_feed_lag_seconds',
    'age of the oldest committed event the feed has not published yet, because an older transaction of the cluster is still running (0 when none waits).',
    [],
    (g) => [[{}, g.horizon.lagSeconds]],
  );
  databaseGauge('svc_events_feed_unpublished', 'committed events the feed has not published yet (counted up to 10000).', [], (g) => [[{}, g.horizon.unpublished]]);
  databaseGauge(
    'svc_events_horizon_holder_age_seconds',
    "age of the oldest transaction with a transaction id anywhere in the cluster, which holds the events feed's horizon: kind session (pg_stat_activity) or prepared (pg_prepared_xacts); 0 when none.",
    ['kind'],
    (g) => [
      [{ kind: 'session' }, g.horizon.oldestSeconds.session],
      [{ kind: 'prepared' }, g.horizon.oldestSeconds.prepared],
    ],
  );
  databaseGauge('svc_events_outbox_backlog', 'events not yet fanned out to webhook deliveries (counted up to 10000); left out when webhooks are off.', [], (g) => [[{}, g.outboxBacklog]], whenWebhooks);

  const hooks: MetricsHooks = {
    callEnded(transport: Transport, operationId: string | null, startedMs: number, result: CallResult | null, err?: unknown) {
      const { status, outcome, code } = outcomeOf(result, err);
      const labels = { operation: operationId ?? 'none', transport, status_class: `${Math.floor(status / 100)}xx`, outcome }; // not a contract limit: 4xx
      requests.inc(labels);
      duration.observe(labels, (performance.now() - startedMs) / 1000);
      if (outcome === 'replayed') replays.inc({ transport });
      else if (code === 'idempotency_key_in_progress') inProgress.inc({ transport });
    },
    eventsCommitted(events) {
      for (const e of events) emitted.inc({ type: e.type });
    },
    rateLimited(kind: RateLimitKind) {
      rateLimited.inc({ limit: kind });
    },
    redisFallback() {
      fallbacks.inc();
    },
    transactionEnded(waitSeconds, runSeconds, committed) {
      txWait.observe(waitSeconds);
      txRun.observe({ result: committed ? 'commit' : 'rollback' }, runSeconds);
    },
    webhookAttempt(ok, seconds) {
      const result = ok ? 'success' : 'failure';
      attempts.inc({ result });
      attemptSeconds.observe({ result }, seconds);
    },
  };
  // Label values known in advance start at 0, so rate() and increase() see the first one.
  for (const limit of ['credential', 'failed_auth', 'event_streams']) rateLimited.inc({ limit }, 0);
  for (const transport of ['rest', 'mcp']) {
    replays.inc({ transport }, 0);
    inProgress.inc({ transport }, 0);
  }
  for (const result of ['success', 'failure']) {
    attempts.inc({ result }, 0);
    attemptSeconds.zero({ result });
  }
  for (const result of ['commit', 'rollback']) txRun.zero({ result });
  for (const type of info.eventTypes) emitted.inc({ type }, 0);

  made = {
    registry,
    hooks,
    useDatabase(db, options) {
      database = db;
      webhooksEnabled = options.webhooksEnabled;
    },
    setOpenStreams(read) {
      openStreams = read;
    },
  };
  return made;
}
