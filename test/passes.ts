// Which test files each CI pass runs, and which run one at a time (read by vitest.config.ts; the
// reasons are printed in docs/testing.md, and test/governance/test-passes.test.ts keeps the two in step
// and every test file classified).
//
// CI runs three passes (.ci/run): every file on PGlite (Node 20), the files below that only PostgreSQL
// can fail (POSTGRES), and the files below that touch what differs between Node lines (NODE24) on
// Node 24. `npm run test:full` runs every file in all three, and the bench.
//
// Within a pass the files run on a few workers at once, except the SERIAL ones (and, on PostgreSQL,
// SERIAL_ON_POSTGRES too): they run after the others, one at a time, with the machine to themselves.

/** Timing-sensitive or process-heavy: alone, after the parallel files, on every engine. */
export const SERIAL: Record<string, string> = {
  'test/browser/portal.test.ts': 'drives chromium (a browser and its renderer processes)',
  'test/browser/reference.test.ts': 'drives chromium (a browser and its renderer processes)',
  'test/governance/readme-commands.test.ts': 'runs the README: `npm start` (npm, then svc serve) and `vitest list` processes',
  'test/fleet/crash.test.ts': 'kill -9 in a fleet: three svc serve, HAProxy, PgBouncer, Redis',
  'test/fleet/pooler.test.ts': 'a fleet behind PgBouncer; asserts a revoked key and an event reach every process within 2 s',
  'test/fleet/prometheus.test.ts': 'a fleet of three svc serve scraped by a Prometheus process',
  'test/e2e/crash.test.ts': 'kill -9 of svc serve under write load; asserts every retry ends within the lease + 5 s',
  'test/e2e/pipeline-crash.test.ts': 'kill -9 of svc serve mid-run, two server processes on PostgreSQL, lease take-over',
  'test/e2e/webhooks-multiprocess.test.ts': 'two svc serve processes, kill -9; asserts an SSE event across processes within 1 s',
  'test/e2e/key-instances.test.ts': 'two svc serve processes; asserts a revoked key fails on the other within 1 s',
  'test/e2e/rate-limit-redis.test.ts': 'the rate limit across two svc serve processes and Redis',
  'test/e2e/slow-clients.test.ts': 'asserts 408 between 0.9 and 6 s, and 1.9 and 8 s (server timeouts of 1 s and 2 s)',
  'test/e2e/upload-timeouts.test.ts': 'asserts upload cut-offs within windows of 0.9-3.5 s and 4.9-7 s',
  'test/e2e/events-stream.test.ts': 'asserts live delivery within 1 s and streams ended within 3 s',
  'test/e2e/events-skip.test.ts': 'PostgreSQL: many writers hold transactions open for random times (holds the events horizon)',
  'test/observability/health.test.ts': 'an HAProxy process and two servers; readiness flips seen through its checks',
  'test/governance/watch.test.ts': 'asserts the cache entry is recorded within 1.5 s of a quiet contract (the watcher waits 1 s)',
  'test/e2e/events-stream-backpressure.test.ts': 'asserts a stalled reader is cut off after its stall bound and a slow one is not',
  'test/e2e/hostile-peers.test.ts': 'asserts events reach the feed, a stream and a receiver within 2 s while peers hang',
  'test/e2e/init-project.test.ts': 'svc init outside the repository, then npm ci, npm test (tsc, vitest, svc serve) and npm start there',
};

/**
 * On PostgreSQL also alone: the events feed publishes only below the cluster-wide horizon
 * (pg_snapshot_xmin, runtime/events/feed.ts), so a file that reads the feed or fans out webhooks
 * right after writing sees too little while another file's write transaction is open, and a file
 * that holds a transaction open on purpose delays every other file's events. With every such
 * reader here (or in SERIAL), a file whose statements merely run long (crm-indexes) stays parallel:
 * no file running beside it waits for an event.
 */
export const SERIAL_ON_POSTGRES: Record<string, string> = {
  'test/db/idempotency-claim.test.ts': 'holds a claimed key in an open transaction past CLAIM_WAIT_MS',
  'test/e2e/events-order.test.ts': 'holds transaction A open for a second on purpose',
  'test/e2e/events-feed.test.ts': 'reads the feed right after writing: exact lists per principal',
  'test/e2e/webhooks.test.ts': 'counts deliveries exactly; an endpoint starts at the last published event',
  'test/observability/metrics.test.ts': 'runs the webhook fan-out once and expects exactly the events just written',
  'test/e2e/events-retention.test.ts': 'reads the feed, the stream and the fan-out right after writing and purging: exact lists',
  'test/observability/horizon.test.ts': 'holds the horizon of a private cluster on purpose and waits on the watch’s beat',
  'test/e2e/webhooks-hanging-receiver.test.ts': 'reads the feed right after writing and expects no connection idle in a transaction',
  'test/db/transaction-bounds.test.ts': 'holds transactions open up to their bound on purpose',
  'test/e2e/schema-newer.test.ts': 'expects the fan-out to deliver, and the feed to show, what it just wrote',
};

/**
 * The PostgreSQL pass in CI: the files that exercise the driver (postgres.js: its types, its pool,
 * its error messages), transactions and concurrency across connections, LISTEN/NOTIFY, the events
 * feed and its horizon, idempotency, search and the fleet. Every other file runs on PostgreSQL in
 * `npm run test:full` (POSTGRES_FULL_ONLY names them and why CI leaves them to PGlite).
 */
export const POSTGRES: Record<string, string> = {
  'test/db/audit-batches.test.ts': 'the audit batcher slices a long INSERT through the driver',
  'test/db/audit-retention.test.ts': 'the retention sweep: interval arithmetic and deletes on the server',
  'test/db/client.test.ts': 'the driver: migrations, transactions, concurrent transactions, LISTEN/NOTIFY',
  'test/db/crm-indexes.test.ts': "the planner of PostgreSQL 15 on 100k rows (not PGlite's)",
  'test/db/idempotency-claim.test.ts': 'two connections: a duplicate waits for, or times out behind, the first claim',
  'test/db/notifications.test.ts': 'the polling listener, and the session check a pooler fails (PostgreSQL only)',
  'test/db/pipeline-worker.test.ts': 'claims with FOR UPDATE SKIP LOCKED across connections; leases',
  'test/db/seed.test.ts': 'the demo seed on a server database',
  'test/db/links-migration.test.ts': 'migration 0018 copies the links of a live server database into the domain tables',
  'test/db/transaction-bounds.test.ts': 'statement and idle-in-transaction bounds, as startup parameters and as SET LOCAL, and a connection ended mid-transaction',
  'test/db/sweeps.test.ts': 'sweeps in bounded batches: ctid and data-modifying CTE deletes on the server',
  'test/db/prepared-statements.test.ts': 'named statements counted on the wire; unnamed through PgBouncer in transaction mode',
  'test/auth/api-keys.test.ts': 'NOTIFY svc_key_revoked reaches every instance; key lookups',
  'test/handlers/policy.test.ts': 'visibility rules as SQL on the server',
  'test/handlers/projects-meta.test.ts': 'handler SQL and row types through postgres.js',
  'test/handlers/tasks.test.ts': 'handler SQL and row types through postgres.js',
  'test/pipeline/pipeline.test.ts': 'idempotency, dry-run rollbacks, If-Match, audit and NOTIFY on commit',
  'test/e2e/access.test.ts': 'approvals execute writes in transactions; visibility SQL of nine operations',
  'test/e2e/approvals-dry-run.test.ts': "a dry-run approve inside the approve's rolled-back transaction, every table compared",
  'test/e2e/init-project.test.ts': "an init project's one migration history (svc's machinery and its notes) on a fresh server database, served over REST and MCP",
  'test/e2e/stock-api.test.ts': "the second contract's own migration history from an empty server database, its handlers' SQL through postgres.js",
  'test/e2e/campaigns.test.ts': 'the campaign send operation and the outbox',
  'test/e2e/hostile-peers.test.ts': 'hanging webhook, SMTP and storage peers: no transaction held, no tenant’s events wait',
  'test/e2e/outbox-hanging-smtp.test.ts': 'the outbox claims, commits, then sends: no connection idle in a transaction while SMTP hangs',
  'test/e2e/clients-reviews.test.ts': "aggregates (counts, sums) through the driver's types; hub publication by content hash",
  'test/e2e/crash.test.ts': 'kill -9 under write load: one write per key, every acknowledged write audited (PostgreSQL case)',
  'test/e2e/crm.test.ts': 'search rules, redaction and visibility in SQL',
  'test/e2e/demo-activity.test.ts': 'the demo activity: seed, file worker and pipeline runs on a server database',
  'test/e2e/events-feed.test.ts': 'the events feed and its horizon',
  'test/e2e/webhooks-hanging-receiver.test.ts': 'a receiver that never answers holds no transaction, so no tenant’s events wait',
  'test/e2e/events-order.test.ts': 'events committed out of sequence order (only PostgreSQL overlaps transactions)',
  'test/e2e/events-skip.test.ts': 'no reader skips an event under concurrent writers (PostgreSQL only)',
  'test/e2e/events-stream.test.ts': 'SSE through LISTEN/NOTIFY and the horizon',
  'test/e2e/file-worker.test.ts': 'two file workers split the queue with FOR UPDATE SKIP LOCKED; a scan on slow storage holds no transaction',
  'test/e2e/intake.test.ts': 'state machines in transactions; intake.finalized emitted once',
  'test/e2e/invitation-mail.test.ts': 'the outbox delivery loop on a server database',
  'test/e2e/issue11-results.test.ts': "results of 19 operations against their schemas: the driver's types (dates, numbers)",
  'test/e2e/key-instances.test.ts': 'two processes on one database (PostgreSQL only)',
  'test/e2e/log-privacy.test.ts': "a failing write's driver message never reaches the log",
  'test/e2e/pipeline-crash.test.ts': 'two server processes share one run queue (PostgreSQL case)',
  'test/e2e/pipeline-operations.test.ts': 'pipeline runs, their operations and execution requests; the worker',
  'test/e2e/principals.test.ts': 'idempotency keyed by credential; live grants',
  'test/e2e/rest-writes.test.ts': 'idempotency, dry-run, If-Match, tiers and audit over HTTP',
  'test/e2e/search.test.ts': 'search.query: full-text ranking and paging on the server',
  'test/e2e/secret-fields.test.ts': "idempotent replays of sealed secrets; no table holds one in clear",
  'test/e2e/tier2-tools-states.test.ts': 'state-machine transitions of approved writes in transactions',
  'test/e2e/timeline-paging.test.ts': 'keyset paging on microsecond timestamps through postgres.js',
  'test/e2e/webhooks-multiprocess.test.ts': 'two processes, SKIP LOCKED claims, kill -9 (PostgreSQL only)',
  'test/e2e/webhooks.test.ts': 'fan-out of published events, delivery claims and retries',
  'test/e2e/work-views.test.ts': 'timeline, actions and notifications in SQL, per caller kind',
  'test/observability/health.test.ts': "readiness reads drizzle's migrations table through the driver (bigint created_at)",
  'test/observability/metrics.test.ts': 'the database gauges (counts through the driver) and the outbox lag',
  'test/fleet/crash.test.ts': 'the fleet (PostgreSQL only)',
  'test/fleet/pooler.test.ts': 'the fleet behind PgBouncer (PostgreSQL only)',
  'test/fleet/prometheus.test.ts': 'the fleet scraped by Prometheus (PostgreSQL only)',
  'test/db/prepared.test.ts': 'the template database: a copy has the schema every migration makes from empty, and its own secrets',
  'test/e2e/events-mixed-versions.test.ts': 'a build from before 0016 beside this one, on a private cluster (PostgreSQL only)',
  'test/e2e/events-retention.test.ts': 'retention deletes a prefix of the published (txid, seq) order; positions resume exactly',
  'test/e2e/schema-newer.test.ts': "drizzle's migrations table read through the driver; the fan-out's newer-schema check",
  'test/observability/horizon.test.ts': 'the horizon gauges and the holder warning (PostgreSQL only, a private cluster)',
};

/** What CI leaves to PGlite, by folder or file: never a database, or behaviour the driver cannot change. */
export const POSTGRES_FULL_ONLY: Record<string, string> = {
  'test/generator/': 'the compiler: no database',
  'test/governance/': 'the compiler, docs, builds and the README: no database (npm start runs on PGlite)',
  'test/contract/': 'source scans: no database',
  'test/browser/': 'pages in a browser: rendering, not storage',
  'test/files/': 'extraction and the local store: no database',
  'test/mcp/': 'the MCP transport and tool surface over the same executor; idempotency and writes are covered by the REST files above',
  'test/auth/key-set.test.ts': 'the key-set cache: no database',
  'test/auth/oauth.test.ts': 'token verification; grant lookups are plain reads',
  'test/db/unpipelined.test.ts': "a stand-in for postgres.js's two methods: no database",
  'test/pipeline/headers.test.ts': 'response headers: no database',
  'test/pipeline/strict-json.test.ts': 'the JSON reader: no database',
  'test/pipeline/units.test.ts': 'stage functions: no database',
  'test/pipeline/result-check.test.ts': 'output-schema checks of a fixture handler',
  'test/pipeline/secret-fields.test.ts': 'sealing with AES-256-GCM; the key row is one plain read',
  'test/e2e/approvals-visibility.test.ts': 'who sees a proposal: the visibility SQL runs on PostgreSQL in handlers/policy and access',
  'test/e2e/auth-flood.test.ts': 'throttling failed authentication in memory',
  'test/e2e/files-s3.test.ts': 'the S3 store and signed URLs',
  'test/e2e/files.test.ts': 'uploads, downloads and extraction over HTTP; file claims run on PostgreSQL in file-worker',
  'test/e2e/input-rules.test.ts': 'input refused before any handler runs',
  'test/e2e/openapi-lint.test.ts': 'the served document through Redocly and Spectral',
  'test/e2e/portal-pages.test.ts': 'portal pages and links',
  'test/e2e/portal-sign-in.test.ts': 'OpenID sign-in and the session cookie',
  'test/e2e/rate-limit-redis.test.ts': 'the rate limit in Redis (PGlite copies or a shared database: the same limiter)',
  'test/e2e/reference-docs.test.ts': 'the reference pages over HTTP',
  'test/e2e/rest-basics.test.ts': 'headers, routing, 404/405 and body problems',
  'test/e2e/rest-limits.test.ts': 'the per-credential rate limit (in memory) and the audit of refusals',
  'test/e2e/slow-clients.test.ts': "Node's HTTP timeouts",
  'test/e2e/starting.test.ts': 'the port opens before the app is ready',
  'test/e2e/switches.test.ts': 'write switch and feature flags before audience and scope',
  'test/e2e/upload-timeouts.test.ts': 'upload time rules over HTTP',
  'test/observability/docs.test.ts': 'docs against the metric registry: no database',
  'test/observability/otlp-export.test.ts': 'the OTLP exporter (PGlite by design)',
  'test/observability/tracing.test.ts': 'spans of a request; the transaction span is the same on both drivers',
  'test/db/application-name.test.ts': 'the connection name as a string: no database (the fleet checks names on the server)',
  'test/observability/alert-rules.test.ts': 'promtool checks and tests the rules: no database',
  'test/e2e/events-stream-backpressure.test.ts': 'backpressure is the stream and socket layer; the stream’s reads are the feed’s query, run on PostgreSQL in events-stream',
};

/**
 * The Node 24 pass in CI (on PGlite): the files that touch what differs between Node lines. Every
 * other file runs on Node 24 in `npm run test:full`.
 */
export const NODE24: Record<string, string> = {
  'test/governance/build.test.ts': 'the production build (esbuild bundles; which node: builtins the chunks import)',
  'test/governance/compiler-build.test.ts': "the compiler's build",
  'test/governance/cli.test.ts': 'svc diff and svc release as processes: bin/svc.js, the compiler build and the compile cache (Node 22.1+)',
  'test/observability/otlp-export.test.ts': 'svc seed then svc serve from dist/ (the second start from the compile cache), OTLP over HTTP',
  'test/generator/parallel.test.ts': 'worker_threads, with tsx registered inside the worker',
  'test/governance/watch.test.ts': 'fs.watch, recursive where the platform and Node line allow it',
  'test/e2e/slow-clients.test.ts': "Node's HTTP server timeouts (headersTimeout, requestTimeout) and clientError",
  'test/e2e/upload-timeouts.test.ts': 'the upload time rules on top of the HTTP server timeouts; Readable.fromWeb',
  'test/e2e/rest-basics.test.ts': "@hono/node-server on Node's HTTP: headers, routing, body problems",
  'test/e2e/events-stream.test.ts': 'SSE: a ReadableStream response body read by fetch (undici differs by line)',
  'test/mcp/transport.test.ts': "the MCP SDK's Streamable HTTP over fetch",
  'test/e2e/webhooks.test.ts': 'deliveries through fetch, signed with HMAC (standardwebhooks)',
  'test/e2e/files.test.ts': 'upload and download streams (Readable.fromWeb, Readable.toWeb), HMAC-signed URLs, PDF extraction',
  'test/files/extract.test.ts': "PDF text per page through unpdf's PDF.js",
  'test/pipeline/secret-fields.test.ts': 'AES-256-GCM sealing (node:crypto)',
  'test/auth/oauth.test.ts': 'JWT verification through jose (WebCrypto) against a JWKS fetched over HTTP',
  'test/auth/key-set.test.ts': 'the JWKS fetch abandoned on a timeout; fake timers',
  'test/db/client.test.ts': "PGlite's WebAssembly (V8 13+: no --liftoff-only), its data directory and lock",
};

/** Serial files of a pass: SERIAL, plus SERIAL_ON_POSTGRES on PostgreSQL. */
export function serialFiles(postgres: boolean): string[] {
  return [...Object.keys(SERIAL), ...(postgres ? Object.keys(SERIAL_ON_POSTGRES) : [])];
}

export type Pass = 'all' | 'postgres' | 'node24';

/** The files a pass runs (globs vitest reads). */
export function passFiles(pass: Pass): string[] {
  if (pass === 'postgres') return Object.keys(POSTGRES);
  if (pass === 'node24') return Object.keys(NODE24);
  return ['test/**/*.test.ts'];
}
