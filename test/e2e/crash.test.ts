// kill -9 in the middle of a write load, then a restart (issue 17, items 1 and 7): the real `svc serve`
// in a child process, on a PGlite data directory (without DATABASE_URL) or on a fresh PostgreSQL
// database (with it: CI's PostgreSQL pass). Every create has its own Idempotency-Key and a marker title. After the
// crash every unacknowledged key is retried with its body, as the contract tells a client to: each
// ends in 201 (run once, or replayed) once the dead request's lease has lapsed, never a 409 for
// longer than the lease; afterwards every key has exactly one task, and every acknowledged create
// has its audit row (written in the transaction of its effect).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../../runtime/data/client.ts';
import { LEASE_SECONDS } from '../../runtime/pipeline/idempotency.ts';
import { freshPostgresDatabase } from '../support/db.ts';
import { preparedDataDir } from '../support/prepared.ts';
import { freePort, runSvc as run, serveSvc as serve, stopped } from '../support/process.ts';

interface Attempt {
  key: string;
  title: string;
  status: number | null;
  requestId: string | null;
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

async function crashAndRecover(store: { env: Record<string, string>; open: () => Promise<Database> }) {
  const seeded = JSON.parse((await run(['seed', '--json'], store.env)).trim().split('\n').at(-1)!) as { serviceKey: string; clientId: string };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const first = await serve(store.env, port);
  cleanups.push(() => stopped(first, 'SIGKILL'));

  const create = async (a: Attempt): Promise<void> => {
    try {
      const res = await fetch(`${base}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${seeded.serviceKey}`, 'content-type': 'application/json', 'idempotency-key': a.key },
        body: JSON.stringify({ title: a.title, clientId: seeded.clientId }),
      });
      a.status = res.status;
      a.requestId = res.headers.get('x-request-id');
      await res.arrayBuffer();
    } catch {
      a.status = null; // the connection died with the server: unacknowledged
    }
  };

  // Bounded load: 8 workers, each creating until the server dies; kill -9 after 40 acknowledgements.
  const attempts: Attempt[] = [];
  let acknowledged = 0;
  let killed = false;
  const worker = async () => {
    while (!killed && attempts.length < 400) {
      const a: Attempt = { key: randomUUID(), title: `crash marker ${randomUUID()}`, status: null, requestId: null };
      attempts.push(a);
      await create(a);
      if (a.status === 201 && ++acknowledged >= 40 && !killed) {
        killed = true;
        first.kill('SIGKILL');
      }
      if (a.status === null) return;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  await stopped(first, 'SIGKILL');
  const acked = attempts.filter((a) => a.status === 201);
  const unacked = attempts.filter((a) => a.status !== 201);
  expect(acked.length).toBeGreaterThanOrEqual(40);
  expect(attempts.every((a) => a.status === 201 || a.status === null)).toBe(true);

  const second = await serve(store.env, port);
  cleanups.push(() => stopped(second, 'SIGKILL'));
  const started = Date.now();
  for (const a of unacked) {
    for (;;) {
      await create(a);
      if (a.status !== 409) break;
      // A dead request's claim holds at most one lease (plus a renewal's slack): then it is taken over.
      expect(Date.now() - started).toBeLessThan((LEASE_SECONDS + 5) * 1000);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(a.status).toBe(201);
  }
  await stopped(second, 'SIGTERM');

  const database = await store.open();
  try {
    const rows = await database.execute<{ title: string; n: number }>(
      `select title, count(*)::int as n from tasks where title like 'crash marker %' group by title`,
    );
    const counts = new Map(rows.map((r) => [r.title, r.n]));
    for (const a of attempts) expect(counts.get(a.title), a.title).toBe(1);
    expect(rows.length).toBe(attempts.length);

    const audited = await database.execute<{ request_id: string }>(
      `select request_id from audit_log where operation_id = 'tasks.create' and outcome = 'ran' and status = 201`,
    );
    const ids = new Set(audited.map((r) => r.request_id));
    for (const a of acked) expect(ids.has(a.requestId!), `audit row of ${a.requestId}`).toBe(true);
  } finally {
    await database.close();
  }
  return { acked: acked.length, unacked: unacked.length };
}

describe('kill -9 mid-load', () => {
  // Each engine in its own CI pass: the PGlite case where DATABASE_URL is unset, the PostgreSQL one where it is set.
  it.skipIf(Boolean(process.env.DATABASE_URL))('PGlite: every key ends in exactly one write, every acknowledged write is audited', async () => {
    const dataDir = await preparedDataDir(mkdtempSync(join(tmpdir(), 'svc-crash-')));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const env = { SVC_DATA_DIR: dataDir, DATABASE_URL: '', SVC_RATE_LIMIT_PER_MINUTE: '100000' };
    const result = await crashAndRecover({ env, open: () => openDatabase({ databaseUrl: null, dataDir }) });
    expect(result.acked).toBeGreaterThan(0);
  }, 240_000);

  it.runIf(Boolean(process.env.DATABASE_URL))('PostgreSQL: every key ends in exactly one write, every acknowledged write is audited', async () => {
    const fresh = await freshPostgresDatabase(process.env.DATABASE_URL!);
    cleanups.push(() => fresh.drop());
    const env = { DATABASE_URL: fresh.url, SVC_RATE_LIMIT_PER_MINUTE: '100000' };
    const result = await crashAndRecover({ env, open: () => openDatabase({ databaseUrl: fresh.url, dataDir: '' }) });
    expect(result.unacked).toBeGreaterThanOrEqual(0);
  }, 240_000);
});
