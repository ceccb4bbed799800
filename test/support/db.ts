// A fresh, migrated database for one test file: in-memory PGlite, or, when DATABASE_URL is set, a
// new PostgreSQL database (svc_test_<random>) created on that server and dropped by close().
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openDatabase, type Database } from '../../runtime/data/client.ts';

export function usingPostgres(): boolean {
  return Boolean(process.env.DATABASE_URL);
}

/** A new, empty PostgreSQL database on DATABASE_URL's server: its URL and how to drop it. */
export async function freshPostgresDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
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

export async function freshDatabase(): Promise<Database> {
  const url = process.env.DATABASE_URL;
  if (!url) return openDatabase({ databaseUrl: null, dataDir: ':memory:' });

  const fresh = await freshPostgresDatabase(url);
  const database = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
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
