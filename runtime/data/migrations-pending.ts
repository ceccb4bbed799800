// Where the database's schema stands against this build's migrations, decided as drizzle's migrator
// decides, without running it: the migrator reads and hashes every migration file, creates its schema
// and table if missing and opens a transaction on every start, and a server starts far more often
// than a migration lands. Drizzle applies each journal entry whose `when` is later than the
// created_at of the newest row of drizzle.__drizzle_migrations (every entry when there is no row), so
// nothing is pending exactly when that row exists and is not older than the journal's latest entry.
//
// A newest row LATER than the journal's latest entry means a newer build migrated this database: this
// process does not know its schema, and must not serve it (SchemaNewerError; docs/fleet.md, rolling
// upgrades). A running process checks again before each webhook fan-out (events/webhooks/deliveries.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';

const journals = new Map<string, number>();

/** The latest `when` of the migrations journal (meta/_journal.json) in the folder (read once per folder). */
export function latestJournalEntry(migrationsFolder: string): number {
  let latest = journals.get(migrationsFolder);
  if (latest === undefined) {
    const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { when: number }[] };
    latest = Math.max(...journal.entries.map((e) => e.when));
    journals.set(migrationsFolder, latest);
  }
  return latest;
}

/** The migrator's record of the newest migration applied (its `when`), null when none is (or no table). */
export const NEWEST_APPLIED_SQL = sql`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`;

type Execute = (query: SQL) => Promise<Record<string, unknown>[]>;

async function newestApplied(execute: Execute): Promise<number | null> {
  const [table] = await execute(sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`);
  if (table?.present !== true) return null;
  // The migrator's own query (drizzle-orm pg-core dialect.migrate), and its comparison.
  const [last] = await execute(NEWEST_APPLIED_SQL);
  return last ? Number(last.created_at) : null;
}

/** The database was migrated by a build newer than this one. */
export class SchemaNewerError extends Error {
  constructor(
    readonly applied: number,
    readonly known: number,
  ) {
    super(
      `The database's schema is newer than this build of svc knows: its newest migration is from ${new Date(applied).toISOString()}, ` +
        `this build's newest from ${new Date(known).toISOString()}. A newer svc has migrated it; run that version or a later one. ` +
        'An older process must not serve a newer schema (it could skip webhooks or misread events): see docs/fleet.md, rolling upgrades.',
    );
    this.name = 'SchemaNewerError';
  }
}

/** Throws SchemaNewerError when `applied` (the newest migration's `when`) is later than this build's newest. */
export function assertSchemaKnown(applied: number | null, migrationsFolder: string): void {
  const known = latestJournalEntry(migrationsFolder);
  if (applied !== null && applied > known) throw new SchemaNewerError(applied, known);
}

/**
 * True when the migrator would apply something (or when it cannot be told: then the migrator decides);
 * SchemaNewerError when a newer build migrated the database.
 */
export async function migrationsPending(execute: Execute, migrationsFolder: string): Promise<boolean> {
  const applied = await newestApplied(execute);
  assertSchemaKnown(applied, migrationsFolder);
  return applied === null || applied < latestJournalEntry(migrationsFolder);
}

/** After migrating: SchemaNewerError when another (newer) process migrated further meanwhile. */
export async function assertNotNewer(execute: Execute, migrationsFolder: string): Promise<void> {
  assertSchemaKnown(await newestApplied(execute), migrationsFolder);
}
