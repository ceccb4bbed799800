// kill -9 of one process of a fleet under write load (issue 23, docs/fleet.md): three `svc serve`
// behind HAProxy, DATABASE_URL -> PgBouncer in transaction mode. Eight clients create tasks through
// HAProxy, each retrying every write with its Idempotency-Key until it is acknowledged (a dropped
// connection, a 5xx, a 409 while the dead holder's lease runs). Then:
// - every write is acknowledged and stored exactly once, with the id of its acknowledgement;
// - every write is audited (the row the command committed with its effect, found by the attempts'
//   X-Request-Id), and no idempotency record is left in_progress;
// - webhooks keep flowing: every task.created reaches a real receiver (verified with standardwebhooks)
//   once the dead process's claims lapse, and no webhook-id is delivered twice after a 2xx, except
//   what is inherent to at-least-once delivery: a delivery whose 2xx arrived while its process was
//   being killed, before the process could record it, is sent again (asserted: only such deliveries).
// Skipped, with the reason, without PostgreSQL, pgbouncer, haproxy or Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { Webhook } from 'standardwebhooks';
import { fleetMissing, startFleet, type Fleet } from '../support/fleet.ts';
import { call, expectStatus, until } from './support.ts';

const missing = await fleetMissing();
if (missing) console.warn(`test/fleet/crash.test.ts skipped: ${missing}`);

const WRITERS = 8;
const PER_WRITER = 30;

interface Receipt {
  at: number;
  status: number;
}

describe.skipIf(missing !== null)('kill -9 of one process of a fleet under write load', () => {
  let fleet: Fleet;
  let sql: ReturnType<typeof postgres>;
  let receiver: ReturnType<typeof createServer>;
  let secret = '';
  let bad = 0;
  const receipts = new Map<string, Receipt[]>(); // webhook-id -> every delivery

  beforeAll(async () => {
    fleet = await startFleet({ env: { SVC_RATE_LIMIT_PER_MINUTE: '100000' } });
    sql = postgres(fleet.directUrl, { max: 2, onnotice: () => {} });
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
        } catch {
          bad++;
        }
        const id = req.headers['webhook-id'] as string;
        const list = receipts.get(id) ?? [];
        receipts.set(id, list);
        list.push({ at: Date.now(), status: 204 });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  }, 240_000);

  afterAll(async () => {
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    await sql?.end({ timeout: 5 });
    await fleet?.stop();
  });

  it('every acknowledged write stored exactly once and audited; webhooks keep flowing, none twice after a 2xx', async () => {
    const endpoint = await call(fleet.url, fleet.operatorKey, 'POST', '/v1/webhook-endpoints', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, eventTypes: ['task.created'] }, { 'idempotency-key': randomUUID() });
    expectStatus(endpoint, 201);
    secret = (endpoint.body.result as { secret: string }).secret;

    const run = randomUUID().slice(0, 8);
    const acknowledged = new Map<string, string>(); // idempotency key -> task id
    const attempts = new Map<string, string[]>(); // idempotency key -> X-Request-Id of every attempt
    let retried = 0;
    let done = 0;
    const write = async (w: number, i: number) => {
      const key = randomUUID();
      const body = JSON.stringify({ title: `crash ${run} ${w}-${i}`, clientId: fleet.clientId });
      const deadline = Date.now() + 90_000;
      for (let attempt = 0; Date.now() < deadline; attempt++) {
        const requestId = `crash-${run}-${w}-${i}-${attempt}`;
        attempts.set(key, [...(attempts.get(key) ?? []), requestId]);
        try {
          const res = await fetch(`${fleet.url}/v1/tasks`, {
            method: 'POST',
            headers: { authorization: `Bearer ${fleet.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': key, 'x-request-id': requestId },
            body,
          });
          const json = (await res.json().catch(() => ({}))) as { result?: { id: string } };
          if (res.status === 201) {
            acknowledged.set(key, json.result!.id);
            done++;
            return;
          }
          expect([409, 502, 503, 504]).toContain(res.status);
        } catch {
          // the connection died with the process: retry with the same key
        }
        retried++;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`write ${w}-${i} never acknowledged`);
    };
    const load = Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < PER_WRITER; i++) await write(w, i);
      }),
    );
    await until(() => done >= (WRITERS * PER_WRITER) / 4, 60_000, 'a quarter of the writes acknowledged');
    const killedAt = Date.now();
    fleet.procs[0]!.child.kill('SIGKILL');
    await load;
    expect(acknowledged.size).toBe(WRITERS * PER_WRITER);
    expect(retried).toBeGreaterThan(0); // the kill was felt by the clients

    // Stored exactly once, with the acknowledged ids.
    const stored = await sql<{ id: string; title: string }[]>`select id, title from tasks where title like ${`crash ${run} %`}`;
    expect(stored).toHaveLength(WRITERS * PER_WRITER);
    expect(new Set(stored.map((t) => t.title)).size).toBe(WRITERS * PER_WRITER);
    expect(new Set(stored.map((t) => t.id))).toEqual(new Set(acknowledged.values()));
    const [open] = await sql<{ n: number }[]>`select count(*)::int as n from idempotency_records where state = 'in_progress'`;
    expect(open!.n).toBe(0);

    // Audited: each write's attempts include one whose audit row says it ran and answered 201.
    const allAttempts = [...attempts.values()].flat();
    const audited = await sql<{ request_id: string }[]>`select request_id from audit_log where operation_id = 'tasks.create' and status = 201 and request_id = any(${allAttempts})`;
    const auditedIds = new Set(audited.map((r) => r.request_id));
    const unaudited = [...attempts.entries()].filter(([, ids]) => !ids.some((id) => auditedIds.has(id)));
    expect(unaudited).toEqual([]);

    // Webhooks keep flowing: every task.created of the run delivered, once its event exists.
    const events = await sql<{ id: string }[]>`select e.id from events e join tasks t on t.id = e.subject_id where e.type = 'task.created' and t.title like ${`crash ${run} %`}`;
    expect(events).toHaveLength(WRITERS * PER_WRITER);
    await until(() => events.every((e) => receipts.has(e.id)), 120_000, 'every task.created of the run delivered').catch(async (err: Error) => {
      const states = await sql`select status, count(*)::int as n, min(next_attempt_at)::text as next from webhook_deliveries group by status`;
      throw new Error(`${err.message}: ${events.filter((e) => receipts.has(e.id)).length} of ${events.length} received; deliveries ${JSON.stringify(states)}`);
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(bad).toBe(0);
    // None twice after a 2xx, except a delivery acknowledged (2xx) in the instant its process was killed.
    const twice = [...receipts.entries()].filter(([, list]) => list.length > 1);
    for (const [id, list] of twice) {
      expect(list[0]!.at, `webhook-id ${id} was delivered again although its first 2xx was not at the kill`).toBeGreaterThan(killedAt - 1_000);
      expect(list[0]!.at).toBeLessThanOrEqual(killedAt + 200);
    }
  }, 300_000);
});
