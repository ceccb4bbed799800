// The audit batcher writes a long batch in slices (issue 26: on PGlite one statement runs on the
// server's thread, so a 1,000-row INSERT held every request): every entry arrives, in order, and
// requests get to run between the slices.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Auditor, type AuditEntry } from '../../runtime/pipeline/audit.ts';
import type { Database } from '../../runtime/data/client.ts';
import { freshDatabase, usingPostgres } from '../support/db.ts';

const entry = (n: number): AuditEntry => ({
  requestId: `req_slice_${String(n).padStart(3, '0')}`,
  transport: 'rest',
  operationId: 'meta.get',
  toolName: null,
  method: 'GET',
  path: '/v1/meta',
  principal: { kind: 'operator', id: 'usr_x', credentialId: 'key_x', loginMethod: 'api_key' },
  status: 200,
  outcome: 'read',
  problemCode: null,
  durationMs: 1,
});

describe(`audit batches in slices (${usingPostgres() ? 'postgres' : 'pglite'})`, () => {
  let database: Database;
  beforeAll(async () => {
    database = await freshDatabase();
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  /** database, its statements counted (the Auditor writes through db.execute). */
  function counting(): { database: Database; statements: () => number } {
    let n = 0;
    const db = new Proxy(database.db, {
      get(target, prop, receiver) {
        if (prop !== 'execute') return Reflect.get(target, prop, receiver);
        return (...args: unknown[]) => {
          n++;
          return (target.execute as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { database: { ...database, db }, statements: () => n };
  }

  it('writes a batch longer than a slice whole and in order, one statement a slice, yielding between them', async () => {
    const counted = counting();
    const auditor = new Auditor(counted.database, { batchSize: 1_000, delayMs: 60_000, sliceRows: 3 });
    for (let n = 0; n < 10; n++) auditor.record(entry(n));
    const turns: number[] = [];
    const flushed = auditor.flush().then(() => turns.push(counted.statements()));
    // A macrotask queued now runs before the batch is done: the flush lets the event loop run.
    await new Promise<void>((resolve) => setImmediate(() => (turns.push(-1), resolve())));
    await flushed;
    const rows = await database.execute<{ request_id: string }>(sql`select request_id from audit_log where request_id like 'req_slice_%' order by id`);
    expect(rows.map((r) => r.request_id)).toEqual(Array.from({ length: 10 }, (_, n) => entry(n).requestId));
    expect(counted.statements()).toBe(4);
    expect(turns).toEqual([-1, 4]);
  });

  it('writes whole batches on PostgreSQL and 32-row slices on PGlite by default', async () => {
    const counted = counting();
    const auditor = new Auditor(counted.database, { delayMs: 60_000 });
    for (let n = 100; n < 170; n++) auditor.record(entry(n));
    await auditor.close();
    const rows = await database.execute<{ n: number }>(sql`select count(*)::int as n from audit_log where request_id >= 'req_slice_100'`);
    expect(rows[0]!.n).toBe(70);
    expect(counted.statements()).toBe(database.kind === 'pglite' ? 3 : 1);
  });
});
