// Migrations on PostgreSQL: every pending migration and the cursor secret in ONE transaction, under a
// transaction-scoped advisory lock (pg_advisory_xact_lock). Unlike a session lock, a transaction lock
// lives exactly as long as the transaction, so it holds through a transaction pooler (PgBouncer in
// transaction mode keeps one server connection for the whole transaction) as well as on PostgreSQL
// itself: several instances starting at once migrate one at a time, whichever URL they migrate on.
//
// The steps are drizzle's own (drizzle-orm pg-core dialect.migrate: create its schema and table if
// missing, apply each journal entry newer than the newest row, record it), with the lock taken first
// and everything inside the one transaction, so an instance that waited on the lock sees the first
// one's rows and applies nothing.
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Db } from './db-types.ts';
import { ensureCursorSecret } from './cursor-secret.ts';

/** Advisory lock key held while migrating ("svc-migr" as an integer). */
export const MIGRATION_LOCK_KEY = 7_312_851_004;

export async function migratePostgres(database: { transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> }, migrationsFolder: string): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder });
  return database.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await tx.execute(sql`create schema if not exists drizzle`);
    await tx.execute(sql`create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`);
    // postgres.js answers an array of rows (this runs on PostgreSQL only).
    const [last] = (await tx.execute(sql`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`)) as unknown as { created_at: string | number | null }[];
    let applied = 0;
    for (const migration of migrations) {
      if (last && Number(last.created_at) >= migration.folderMillis) continue;
      for (const statement of migration.sql) await tx.execute(sql.raw(statement));
      await tx.execute(sql`insert into drizzle.__drizzle_migrations ("hash", "created_at") values (${migration.hash}, ${migration.folderMillis})`);
      applied++;
    }
    await ensureCursorSecret(tx);
    return applied;
  });
}
