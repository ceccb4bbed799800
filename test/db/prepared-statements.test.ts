// Named prepared statements (runtime/data/prepared-statements.ts) and statements built once
// (runtime/data/statement.ts). On PostgreSQL itself a statement is parsed once per connection and then
// costs one round trip; through PgBouncer in transaction mode it is never named (another server
// connection may take the next transaction) and still right under concurrency. Counted on the wire
// (test/support/pg-wire-count.ts). The statement helpers' rows are checked on PGlite too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { DrizzleQueryError, eq, sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../../runtime/data/client.ts';
import { preparedStatementsFrom, usePreparedStatements } from '../../runtime/data/prepared-statements.ts';
import { statement, tableStatement } from '../../runtime/data/statement.ts';
import { idempotencyRecords } from '../../runtime/data/schema.ts';
import { freshDatabase, freshPostgresDatabase } from '../support/db.ts';
import { startWireCounter, type WireCounter } from '../support/pg-wire-count.ts';
import { PGBOUNCER_BIN, startPgBouncer, type PgBouncer } from '../support/fleet.ts';

const url = process.env.DATABASE_URL;

describe('the prepared statements setting', () => {
  it('is auto unless set; auto names statements on a session connection only; anything else is refused by name', () => {
    expect(preparedStatementsFrom({})).toBe('auto');
    expect(preparedStatementsFrom({ SVC_DB_PREPARED_STATEMENTS: ' On ' })).toBe('on');
    expect(() => preparedStatementsFrom({ SVC_DB_PREPARED_STATEMENTS: 'yes' })).toThrow(/SVC_DB_PREPARED_STATEMENTS must be auto, on or off; got "yes"/);
    expect(usePreparedStatements('auto', true)).toBe(true);
    expect(usePreparedStatements('auto', false)).toBe(false);
    expect(usePreparedStatements('on', false)).toBe(true);
    expect(usePreparedStatements('off', true)).toBe(false);
  });
});

const byKey = tableStatement('test_idempotency_by_key', idempotencyRecords, (db) =>
  db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, sql.placeholder('key') as never)),
);
const insertKey = statement<{ key: string }>('test_insert_key', (db) =>
  db
    .insert(idempotencyRecords)
    .values({
      credentialId: 'cred_test',
      operationId: 'tests.op',
      key: sql.placeholder('key'),
      fingerprint: 'f',
      state: 'in_progress',
      createdAt: sql.placeholder('at'),
      expiresAt: sql.placeholder('at'),
    } as never)
    .returning({ key: idempotencyRecords.key }),
);

async function roundTrip(database: Database, key: string): Promise<void> {
  const at = new Date('2026-11-29T00:00:00.000Z');
  await database.transaction(async (tx) => {
    expect(await insertKey.run(tx, { key, at })).toEqual([{ key }]);
    const [row] = await byKey.run(tx, { key });
    // Whole rows, keyed and decoded as drizzle's own select returns them.
    expect(row).toMatchObject({ credentialId: 'cred_test', key, state: 'in_progress', holder: null });
    expect(row!.expiresAt).toBeInstanceOf(Date);
    expect(row!.expiresAt.toISOString()).toBe(at.toISOString());
  });
  // And inside a transaction that rolls back, the statement's write goes with it.
  await expect(
    database.transaction(async (tx) => {
      await insertKey.run(tx, { key: `${key}-gone`, at });
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await byKey.run(database.db, { key: `${key}-gone` })).toEqual([]);
  // A driver error comes back as drizzle's own path gives it on either engine (on postgres.js the
  // statement skips that path, runtime/data/statement.ts): a DrizzleQueryError with the statement's
  // text and parameters, the driver's error (and its SQLSTATE, which the idempotency claim reads) as its cause.
  const failed = await database.transaction((tx) => insertKey.run(tx, { key, at })).then(
    () => null,
    (err: unknown) => err,
  );
  expect(failed).toBeInstanceOf(DrizzleQueryError);
  expect((failed as DrizzleQueryError).query).toMatch(/^insert into "idempotency_records"/);
  expect((failed as DrizzleQueryError).params).toEqual(['cred_test', 'tests.op', key, 'f', 'in_progress', at.toISOString(), at.toISOString()]);
  expect(((failed as DrizzleQueryError).cause as { code?: string }).code).toBe('23505');
  // A value missing for a placeholder: drizzle's own error, before anything is sent.
  await expect(database.transaction((tx) => insertKey.run(tx, { key: `${key}-no-at` }))).rejects.toThrow('No value for placeholder "at" was provided');
}

describe('statements built once', () => {
  it('run inside the caller’s transaction and hand back decoded rows (PGlite, or PostgreSQL with DATABASE_URL)', async () => {
    const database = await freshDatabase();
    try {
      await roundTrip(database, 'k-engine');
      await roundTrip(database, 'k-engine-2');
    } finally {
      await database.close();
    }
  });
});

describe.skipIf(!url)('prepared statements on PostgreSQL', () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let counter: WireCounter;
  const opened: Database[] = [];
  const bouncers: PgBouncer[] = [];
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(url!);
  }, 120_000);
  afterAll(async () => {
    for (const d of opened) await d.close();
    for (const b of bouncers) await b.stop();
    await counter?.stop();
    await fresh?.drop();
  });
  const open = async (databaseUrl: string, preparedStatements: 'auto' | 'on' | 'off' = 'auto') => {
    const d = await openDatabase({ databaseUrl, dataDir: ':memory:', poolMax: 1, preparedStatements });
    opened.push(d);
    return d;
  };
  const requests = (c: WireCounter) => [...c.counts()].filter(([name]) => name.startsWith('svc:requests')).map(([, e]) => e);
  const sent = (c: WireCounter, type: string) => requests(c).reduce((a, e) => a + (e.sent[type] ?? 0), 0);
  const trips = (c: WireCounter) => requests(c).reduce((a, e) => a + e.roundTrips, 0);

  it('on PostgreSQL itself: parsed once per connection, then one round trip a statement', async () => {
    const target = new URL(fresh.url);
    counter = await startWireCounter(target.hostname, Number(target.port || 5432));
    const database = await open(counter.url(fresh.url));
    expect(database.notifications.description).toMatch(/named prepared statements/);
    await roundTrip(database, 'k-direct-warm');
    counter.reset();
    for (let i = 0; i < 5; i++) await byKey.run(database.db, { key: `k-${i}` });
    expect(sent(counter, 'P')).toBe(0); // already parsed on this connection
    expect(trips(counter)).toBe(5);
  });

  it('SVC_DB_PREPARED_STATEMENTS=off: every statement parsed and described anew, two round trips', async () => {
    const database = await open(counter.url(fresh.url), 'off');
    expect(database.notifications.description).toMatch(/unnamed statements/);
    await byKey.run(database.db, { key: 'k-warm' });
    counter.reset();
    for (let i = 0; i < 5; i++) await byKey.run(database.db, { key: `k-${i}` });
    expect(sent(counter, 'P')).toBe(5);
    expect(trips(counter)).toBe(10);
  });

  it.skipIf(!existsSync(PGBOUNCER_BIN))('through PgBouncer in transaction mode: never named, and right across server connections', async () => {
    const bouncer = await startPgBouncer(new URL(fresh.url), 'transaction');
    bouncers.push(bouncer);
    const pooledUrl = bouncer.url(new URL(fresh.url).pathname.slice(1));
    const many = await Promise.all([0, 1, 2].map(() => openDatabase({ databaseUrl: pooledUrl, dataDir: ':memory:', poolMax: 4 })));
    opened.push(...many);
    for (const d of many) expect(d.notifications.description).toMatch(/unnamed statements/);
    // Twelve writers over three processes' pools share PgBouncer's server connections: each reads its own rows.
    await Promise.all(many.flatMap((d, i) => [0, 1, 2, 3].map((j) => roundTrip(d, `k-pooled-${i}-${j}`))));
  });
});
