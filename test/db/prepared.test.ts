// Prepared test databases (test/support/prepared.ts): a copy of the database migrated once per run
// must be the database every migration makes from empty, and must not share a secret with another
// copy. Runs on PGlite, and on PostgreSQL when DATABASE_URL is set.
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../runtime/data/client.ts';
import { cursorSecret } from '../../runtime/data/cursor-secret.ts';
import { freshDatabase } from '../support/db.ts';

const opened: Database[] = [];
async function open(options: { empty?: boolean } = {}): Promise<Database> {
  const database = await freshDatabase(options);
  opened.push(database);
  return database;
}
afterAll(async () => {
  for (const database of opened) await database.close();
});

/** Every table's columns, every index and constraint of the public schema, and the migrations recorded. */
async function schemaOf(database: Database): Promise<unknown> {
  const columns = await database.execute(
    `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
      where table_schema = 'public' order by table_name, column_name`,
  );
  const indexes = await database.execute(`select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by tablename, indexname`);
  const constraints = await database.execute(
    `select conrelid::regclass::text as rel, conname, pg_get_constraintdef(oid) as def from pg_constraint
      where connamespace = 'public'::regnamespace order by rel, conname`,
  );
  const migrations = await database.execute(`select hash, created_at::text from drizzle.__drizzle_migrations order by created_at`);
  return { columns, indexes, constraints, migrations };
}

describe('prepared databases', () => {
  it('a prepared copy has the schema that every migration applied to an empty database makes', async () => {
    const [prepared, empty] = await Promise.all([open(), open({ empty: true })]);
    const fromEmpty = await schemaOf(empty);
    expect((fromEmpty as { columns: unknown[] }).columns.length).toBeGreaterThan(100);
    expect(await schemaOf(prepared)).toEqual(fromEmpty);
  });

  it('each database makes its own secrets: two prepared copies share none', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const [secretA, secretB] = [await cursorSecret(a.db), await cursorSecret(b.db)];
    expect(secretA).not.toBe(secretB);
    // Nothing but what the migrations themselves insert came from the snapshot: no stored secret of any kind.
    for (const database of [a, b]) {
      const rows = await database.execute<{ key: string }>(`select key from settings where key like '%secret%' or key like '%key%' order by key`);
      expect(rows.map((r) => r.key)).toEqual(['cursor_secret']);
    }
  });
});
