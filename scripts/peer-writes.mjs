// The baseline of the write bench (issue 24): the durable work of POST /v1/tasks done by hand, a small
// Hono app on @hono/node-server with postgres.js, in its own process. One transaction of the four
// statements svc sends (docs/writes.md): the idempotency claim, the client read, the task row, and the
// stored answer with the audit row and the event row with its NOTIFY as one statement of CTEs. Its tables are copies of svc's (CREATE TABLE ... LIKE ...
// INCLUDING ALL: the same columns, defaults, generated search vector and indexes; no foreign keys)
// in a schema of its own, so both can run against one database. No authentication, no validation:
// the cost of those is part of what svc adds. Plain JavaScript: no loader.
// PREPARE=false runs with unnamed statements, as svc does behind a transaction pooler; by default
// postgres.js names them, as svc does on a session connection: the same driver settings as svc's.
//   DATABASE_URL=postgres://… PORT=… [PREPARE=false] node scripts/peer-writes.mjs
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';

const sql = postgres(process.env.DATABASE_URL, { max: 10, prepare: process.env.PREPARE !== 'false', onnotice: () => {} });
await sql`create schema if not exists peer`;
for (const table of ['idempotency_records', 'tasks', 'events', 'audit_log']) {
  await sql.unsafe(`create table if not exists peer.${table} (like public.${table} including all)`);
}

const app = new Hono();
app.post('/v1/tasks', async (c) => {
  const key = c.req.header('idempotency-key') ?? randomUUID();
  const input = await c.req.json();
  const started = performance.now();
  const now = new Date();
  const id = `tsk_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  const task = { id, clientId: input.clientId ?? null, title: String(input.title), status: 'todo', priority: 'normal', createdAt: now.toISOString() };
  const body = { outcome: 'ran', result: task };
  await sql.begin(async (tx) => {
    await tx`insert into peer.idempotency_records (credential_id, operation_id, key, fingerprint, state, holder, expires_at)
             values ('peer', 'tasks.create', ${key}, 'x', 'in_progress', 'peer', ${new Date(now.getTime() + 86_400_000)})`;
    if (task.clientId !== null) {
      const [client] = await tx`select * from public.clients where id = ${task.clientId}`;
      if (!client) throw new Error('no such client');
    }
    await tx`insert into peer.tasks (id, client_id, title, status, priority, created_by) values (${id}, ${task.clientId}, ${task.title}, 'todo', 'normal', 'peer') returning *`;
    await tx`with d as (update peer.idempotency_records set state = 'done', holder = null, response_status = 201, response_body = ${sql.json(body)}
                        where credential_id = 'peer' and operation_id = 'tasks.create' and key = ${key} returning key),
                  a as (insert into peer.audit_log (request_id, transport, operation_id, method, path, status, outcome, duration_ms)
                        values (${randomUUID()}, 'rest', 'tasks.create', 'POST', '/v1/tasks', 201, 'ran', ${Math.round(performance.now() - started)})),
                  e as (insert into peer.events (id, type, client_id, subject_id, data) values (${`evt_${id}`}, 'task.created', ${task.clientId}, ${id}, ${sql.json(task)}) returning seq),
                  n as (select pg_notify('peer_events', seq::text) from e)
             select (select count(*) from d) as n, (select count(*) from n) as notified`;
  });
  return c.json(body, 201);
});
app.get('/v1/meta', (c) => c.json({ peer: true }));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });
process.on('SIGTERM', () => sql.end({ timeout: 1 }).finally(() => process.exit(0)));
