// The same-work peer of GET /v1/meta (issue 26): a small hand-written Hono server, in its own process,
// doing what the contract asks of that call and nothing more. Against it the pipeline's ratio says
// what svc's own overhead costs; bare-hono.mjs stays as the ceiling (no work at all).
//   - the API key (Bearer) looked up by its SHA-256 in an in-memory map (401 otherwise);
//   - a per-credential fixed window of RATE_LIMIT requests a minute (429 when used up);
//   - the response headers svc sends for it: x-request-id (a caller's valid one kept), traceparent
//     (a valid incoming one continued, else a new trace), x-svc-api-version, RateLimit-Policy,
//     RateLimit, X-RateLimit-Limit/Remaining/Reset (GET /v1/meta is not deprecated: no Deprecation);
//   - the body built per request from the fixed parts and the caller's principal;
//   - one audit row a call, queued and written in batches (200 ms or 1,000 rows, one multi-row
//     INSERT; on PGlite, which runs on this thread, in slices of 32 rows with the event loop let run
//     between them, as svc's Auditor does) to the same kind of database: PGlite in this process when DATABASE_URL is empty (what
//     `svc serve` embeds), else PostgreSQL through postgres.js into the audit_log svc writes.
// Environment: PORT, KEY (the operator key), BODY (svc's answer to GET /v1/meta for KEY, from which
// the fixed parts and the principal are taken), DATABASE_URL, PGLITE_DIR, API_VERSION, RATE_LIMIT.
// Plain JavaScript: no loader.
import { createHash, randomBytes } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const RATE_LIMIT = Number(process.env.RATE_LIMIT ?? 600);
const WINDOW_MS = 60_000;
const API_VERSION = process.env.API_VERSION ?? '1.2';
const meta = JSON.parse(process.env.BODY ?? '{}');
const { principal, effectiveScopes, clientScope, ...fixed } = meta;

// The key store: sha256(key) -> the credential's principal and scopes (as svc's key set holds it).
const sha256 = (s) => createHash('sha256').update(s).digest('hex');
const keys = new Map([[sha256(process.env.KEY ?? ''), { principal, effectiveScopes, clientScope }]]);

// Per-credential fixed window.
const windows = new Map();
function take(credentialId) {
  const now = Date.now();
  let w = windows.get(credentialId);
  if (!w || now >= w.start + WINDOW_MS) windows.set(credentialId, (w = { start: now, count: 0 }));
  const allowed = w.count < RATE_LIMIT;
  if (allowed) w.count++;
  const resetMs = w.start + WINDOW_MS;
  return { allowed, remaining: Math.max(0, RATE_LIMIT - w.count), resetSeconds: Math.max(1, Math.ceil((resetMs - now) / 1000)), resetAt: Math.ceil(resetMs / 1000) };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const ID_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
function requestId() {
  const b = randomBytes(16);
  let s = 'req_';
  for (let i = 0; i < 16; i++) s += ID_CHARS[b[i] % 62];
  return s;
}
function traceparent(incoming) {
  const m = incoming ? TRACEPARENT.exec(incoming) : null;
  const traceId = m && m[1] !== '0'.repeat(32) ? m[1] : randomBytes(16).toString('hex');
  return `00-${traceId}-${randomBytes(8).toString('hex')}-${m ? m[3] : '01'}`;
}

// The audit batcher.
const database = await openDatabase();
let queue = [];
let timer = null;
function audit(row) {
  queue.push(row);
  if (queue.length >= 1000) flush();
  else if (!timer) timer = setTimeout(flush, 200);
}
let writing = Promise.resolve();
function flush() {
  if (timer) clearTimeout(timer);
  timer = null;
  const batch = queue;
  queue = [];
  if (batch.length === 0) return writing;
  writing = writing.then(async () => {
    for (let from = 0; from < batch.length; from += database.sliceRows) {
      if (from > 0) await new Promise((resolve) => setImmediate(resolve));
      await database.insert(JSON.stringify(batch.slice(from, from + database.sliceRows))).catch((err) => console.error('audit write failed', err));
    }
  });
  return writing;
}

const INSERT = `insert into audit_log (at, request_id, transport, operation_id, tool_name, method, path, principal_kind,
    principal_id, credential_id, login_method, status, outcome, problem_code, duration_ms)
  select at, "requestId", 'rest', "operationId", null, method, path, "principalKind", "principalId", "credentialId",
    "loginMethod", status, outcome, null, "durationMs"
  from jsonb_to_recordset($1::text::jsonb) as x(at timestamptz, "requestId" text, "operationId" text, method text, path text,
    "principalKind" text, "principalId" text, "credentialId" text, "loginMethod" text, status integer, outcome text, "durationMs" integer)`;

async function openDatabase() {
  if (process.env.DATABASE_URL) {
    const { default: postgres } = await import('postgres');
    const sql = postgres(process.env.DATABASE_URL, { max: 10, onnotice: () => {} });
    return { insert: (json) => sql.unsafe(INSERT, [json]), close: () => sql.end(), sliceRows: Infinity };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(process.env.PGLITE_DIR || undefined);
  // audit_log as svc's migration 0000_init.sql makes it (and its one index).
  await db.exec(`create table if not exists audit_log (id bigserial primary key, at timestamptz default now() not null,
    request_id text not null, transport text not null, operation_id text, tool_name text, method text not null, path text not null,
    principal_kind text, principal_id text, credential_id text, login_method text, status integer not null, outcome text not null,
    problem_code text, duration_ms integer not null);
    create index if not exists audit_request on audit_log using btree (request_id);`);
  return { insert: (json) => db.query(INSERT, [json]), close: () => db.close(), sliceRows: 32 };
}

const app = new Hono();
app.get('/v1/meta', (c) => {
  const started = performance.now();
  const incomingId = c.req.header('x-request-id');
  const id = incomingId && REQUEST_ID.test(incomingId) ? incomingId : requestId();
  const headers = { 'x-request-id': id, traceparent: traceparent(c.req.header('traceparent')), 'x-svc-api-version': API_VERSION };
  const auth = c.req.header('authorization');
  const entry = auth && auth.startsWith('Bearer ') ? keys.get(sha256(auth.slice(7))) : undefined;
  const row = { at: new Date().toISOString(), requestId: id, operationId: 'meta.get', method: 'GET', path: '/v1/meta', principalKind: entry?.principal.kind ?? null, principalId: entry?.principal.id ?? null, credentialId: entry?.principal.credentialId ?? null, loginMethod: entry?.principal.loginMethod ?? null, status: 200, outcome: 'read', durationMs: 0 };
  if (!entry) {
    row.status = 401;
    row.outcome = 'error';
    audit(row);
    return c.body(JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401, code: 'unauthenticated' }), 401, { ...headers, 'content-type': 'application/problem+json' });
  }
  const d = take(entry.principal.credentialId);
  headers['ratelimit-policy'] = `"default";q=${RATE_LIMIT};w=60`;
  headers.ratelimit = `"default";r=${d.remaining};t=${d.resetSeconds}`;
  headers['x-ratelimit-limit'] = String(RATE_LIMIT);
  headers['x-ratelimit-remaining'] = String(d.remaining);
  headers['x-ratelimit-reset'] = String(d.resetAt);
  if (!d.allowed) {
    row.status = 429;
    row.outcome = 'error';
    audit(row);
    headers['retry-after'] = String(d.resetSeconds);
    return c.body(JSON.stringify({ type: 'about:blank', title: 'Too Many Requests', status: 429, code: 'rate_limited' }), 429, { ...headers, 'content-type': 'application/problem+json' });
  }
  const body = JSON.stringify({ ...fixed, principal: entry.principal, effectiveScopes: entry.effectiveScopes, clientScope: entry.clientScope });
  headers['content-type'] = 'application/json';
  row.durationMs = Math.round(performance.now() - started);
  audit(row);
  return c.body(body, 200, headers);
});

serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });
process.on('SIGTERM', async () => {
  await flush();
  await database.close();
  process.exit(0);
});
