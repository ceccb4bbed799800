// Every svc transaction on PostgreSQL is bounded (runtime/data/transaction-bounds.ts): a statement that
// runs too long is cancelled, a connection idle inside its transaction too long is ended and its
// transaction rolled back, and the pool goes on serving. Both ways the bounds reach the server are
// tested: startup parameters on a session connection, and SET LOCAL in each transaction when the URL
// counts as a pooler (here: DATABASE_DIRECT_URL set, so DATABASE_URL is treated as one). PGlite has
// no other connection to hold back, and no bounds: the file is skipped without DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRows, openDatabase, type Database } from '../../runtime/data/client.ts';
import { DEFAULT_TRANSACTION_BOUNDS, TransactionEndedError, transactionBoundsFrom } from '../../runtime/data/transaction-bounds.ts';
import { freshPostgresDatabase } from '../support/db.ts';
import { existsSync } from 'node:fs';
import { PGBOUNCER_BIN, startPgBouncer, type PgBouncer } from '../support/fleet.ts';

const url = process.env.DATABASE_URL;
const bounds = { statementMs: 400, idleInTransactionMs: 400 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('transaction bounds settings', () => {
  it('default to a few seconds; 0 turns one off; anything else is refused by name', () => {
    expect(transactionBoundsFrom({})).toEqual(DEFAULT_TRANSACTION_BOUNDS);
    expect(transactionBoundsFrom({ SVC_DB_STATEMENT_TIMEOUT_MS: '0', SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '2500' })).toEqual({ statementMs: 0, idleInTransactionMs: 2500 });
    expect(() => transactionBoundsFrom({ SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '5s' })).toThrow(/SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS must be a whole number of milliseconds/);
  });
});

describe.skipIf(!url)('transaction bounds on PostgreSQL', () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  const opened: Database[] = [];
  const bouncers: PgBouncer[] = [];
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(url!);
  }, 120_000);
  afterAll(async () => {
    for (const d of opened) await d.close();
    for (const b of bouncers) await b.stop();
    await fresh?.drop();
  });
  const name = () => new URL(fresh.url).pathname.slice(1);
  const bouncer = async (mode: 'transaction' | 'session') => {
    const b = await startPgBouncer(new URL(fresh.url), mode);
    bouncers.push(b);
    return b.url(name());
  };

  // Where DATABASE_URL points, and DATABASE_DIRECT_URL when set.
  const modes: { name: string; urls: () => Promise<{ url: string; directUrl: string | null }>; pgbouncer?: boolean }[] = [
    { name: 'PostgreSQL itself (startup parameters)', urls: async () => ({ url: fresh.url, directUrl: null }) },
    { name: 'a URL counted as a pooler (SET LOCAL in each transaction)', urls: async () => ({ url: fresh.url, directUrl: fresh.url }) },
    { name: 'PgBouncer in transaction mode (SET LOCAL)', urls: async () => ({ url: await bouncer('transaction'), directUrl: null }), pgbouncer: true },
    // A session pooler refuses unknown startup parameters: the bounds go as SET LOCAL there too.
    { name: 'PgBouncer in session mode (refuses the startup parameters: SET LOCAL)', urls: async () => ({ url: await bouncer('session'), directUrl: null }), pgbouncer: true },
  ];
  for (const mode of modes) {
    // PgBouncer is Debian's package (.ci/run installs it); without it those cases are skipped.
    describe.skipIf(mode.pgbouncer && !existsSync(PGBOUNCER_BIN))(mode.name, () => {
      let database: Database;
      beforeAll(async () => {
        const { url: databaseUrl, directUrl } = await mode.urls();
        database = await openDatabase({ databaseUrl, directUrl, dataDir: '', transactionBounds: bounds });
        opened.push(database);
      }, 60_000);

      it('every transaction runs with the bounds', async () => {
        const shown = await database.transaction(async (tx) => {
          const [a] = await executeRows(tx, 'show statement_timeout');
          const [b] = await executeRows(tx, 'show idle_in_transaction_session_timeout');
          return [a, b];
        });
        expect(shown).toEqual([{ statement_timeout: '400ms' }, { idle_in_transaction_session_timeout: '400ms' }]);
        const worker = await database.workers.transaction((tx) => executeRows(tx, 'show statement_timeout'));
        expect(worker).toEqual([{ statement_timeout: '400ms' }]);
      });

      it('a statement over the bound is cancelled (57014), and the pool serves the next transaction', async () => {
        const err = await database.transaction((tx) => executeRows(tx, 'select pg_sleep(2)')).then(() => null, (e: unknown) => e);
        expect(err).toMatchObject({ cause: { code: '57014' } });
        const [row] = await database.transaction((tx) => executeRows(tx, 'select 1 as one'));
        expect(row).toEqual({ one: 1 });
      });

      it('a transaction left idle over the bound is ended and rolled back, and the pool serves the next one', async () => {
        const key = `bounds:${modes.indexOf(mode)}`;
        let after: unknown = null;
        const err = await database
          .transaction(async (tx) => {
            await executeRows(tx, `insert into settings (key, value) values ('${key}', 'x')`);
            await sleep(1_200); // awaiting a peer inside the transaction: what no svc code may do
            // Never sent: not on the closed connection (an uncaught crash in postgres.js 3.4.9), nor on a
            // reconnected one outside the transaction.
            await executeRows(tx, `insert into settings (key, value) values ('${key}:after', 'x')`).catch((e: unknown) => {
              after = e;
              throw e;
            });
          })
          .then(() => null, (e: unknown) => e);
        expect(err).toMatchObject({ code: 'CONNECTION_CLOSED' });
        await sleep(1_000); // the callback wakes after the rejection and tries its next statement
        const refused = after as { cause?: unknown } | null;
        expect(refused instanceof TransactionEndedError || refused?.cause instanceof TransactionEndedError, String(after)).toBe(true);
        const rows = await database.execute(`select key from settings where key like '${key}%'`);
        expect(rows).toEqual([]);
        // A callback that only returns after its transaction ended: its COMMIT is never written either.
        const quiet = await database.transaction(async () => sleep(900)).then(() => null, (e: unknown) => e);
        expect(quiet).toMatchObject({ code: 'CONNECTION_CLOSED' });
        await sleep(700);
        const [row] = await database.transaction((tx) => executeRows(tx, 'select 1 as one'));
        expect(row).toEqual({ one: 1 });
      });
    });
  }
});
