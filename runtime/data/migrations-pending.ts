// Whether drizzle's migrator has anything to do, decided as it decides, without running it: the
// migrator reads and hashes every migration file, creates its schema and table if missing and opens
// a transaction on every start, and a server starts far more often than a migration lands. Drizzle
// applies each journal entry whose `when` is later than the created_at of the newest row of
// drizzle.__drizzle_migrations (every entry when there is no row), so nothing is pending exactly when
// that row exists and is not older than the journal's latest entry.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';

/** The latest `when` of the migrations journal (meta/_journal.json) in the folder. */
export function latestJournalEntry(migrationsFolder: string): number {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { when: number }[] };
  return Math.max(...journal.entries.map((e) => e.when));
}

/** True when the migrator would apply something (or when it cannot be told: then the migrator decides). */
export async function migrationsPending(execute: (query: SQL) => Promise<Record<string, unknown>[]>, migrationsFolder: string): Promise<boolean> {
  const [table] = await execute(sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`);
  if (table?.present !== true) return true;
  // The migrator's own query (drizzle-orm pg-core dialect.migrate), and its comparison.
  const [last] = await execute(sql`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`);
  return !last || Number(last.created_at) < latestJournalEntry(migrationsFolder);
}
