// A fresh, migrated database for one test file: in-memory PGlite, or, when DATABASE_URL is set, a
// new PostgreSQL database (svc_test_<random>) created on that server and dropped by close(). Both are
// copies of a database migrated once per run (test/support/prepared.ts); `{ empty: true }` starts from
// nothing and runs every migration, as a new deployment does.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openDatabase, type Database } from '../../runtime/data/client.ts';
import { MIGRATIONS_FOLDER } from '../../bin/paths.ts';
import type { TransactionBounds } from '../../runtime/data/transaction-bounds.ts';
import { pgliteSnapshot, postgresTemplate, withDatabase } from './prepared.ts';

export function usingPostgres(): boolean {
  return Boolean(process.env.DATABASE_URL);
}

export interface FreshOptions {
  /** An empty database, every migration applied by the runtime's own path (default: the prepared copy). */
  empty?: boolean;
  /** PostgreSQL: the connections' statement and idle-in-transaction bounds (default: the runtime's). */
  transactionBounds?: TransactionBounds;
}

/** A new PostgreSQL database on DATABASE_URL's server (a copy of the migrated template unless empty): its URL and how to drop it. */
export async function freshPostgresDatabase(url: string, options: FreshOptions = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? null : await postgresTemplate(url);
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  return {
    url: withDatabase(url, name),
    async drop() {
      const dropper = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end({ timeout: 5 });
      }
    },
  };
}

export async function freshDatabase(options: FreshOptions = {}): Promise<Database> {
  const url = process.env.DATABASE_URL;
  // The Platform API's migration history, named here too: scripts (the benches) use this support
  // without vitest's setup file, which installs it for tests.
  if (!url) return openDatabase({ databaseUrl: null, dataDir: ':memory:', migrationsFolder: MIGRATIONS_FOLDER, pgliteLoadDataDir: options.empty ? undefined : await pgliteSnapshot() });

  const fresh = await freshPostgresDatabase(url, options);
  const database = await openDatabase({ databaseUrl: fresh.url, dataDir: '', migrationsFolder: MIGRATIONS_FOLDER, transactionBounds: options.transactionBounds });
  const close = database.close.bind(database);
  let closed = false;
  return {
    ...database,
    async close() {
      if (closed) return;
      closed = true;
      await close();
      await fresh.drop();
    },
  };
}
