// Databases migrated once per run, copied for every test (docs/testing.md, "Prepared databases").
//
// - PGlite: one in-memory database migrated from empty and dumped (PGlite's dumpDataDir) to a file in
//   the temporary directory; every freshDatabase() loads it instead of running initdb and every
//   migration. Spawned `svc serve` processes get a data directory made from the same dump.
// - PostgreSQL: one template database, migrated once and closed to connections; every test database
//   is `CREATE DATABASE … TEMPLATE` it.
//
// Both are named by a digest of the migrations folder (and PGlite's version), so a changed migration
// makes a new one and a stale one is never used. They hold the schema only: every secret a database
// makes for itself (the cursor secret, the stored-secret key, the file URL secret) is made when each
// copy is first opened, so no two test databases share one. SVC_TEST_FRESH_PREPARED=1 rebuilds both.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { MIGRATIONS_FOLDER } from '../../bin/paths.ts';

/** PGlite's version, from its package.json (not in the package's exports map). */
const PGLITE_PACKAGE = fileURLToPath(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url));

/** A digest of every migration file and the PGlite version: the name of what was prepared from them. */
export function preparedKey(): string {
  const hash = createHash('sha256');
  const files = readdirSync(MIGRATIONS_FOLDER, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const file of files) hash.update(file.slice(MIGRATIONS_FOLDER.length)).update('\0').update(readFileSync(file)).update('\0');
  hash.update((JSON.parse(readFileSync(PGLITE_PACKAGE, 'utf8')) as { version: string }).version);
  return hash.digest('hex').slice(0, 12);
}

const fresh = () => process.env.SVC_TEST_FRESH_PREPARED === '1';

// ---------------------------------------------------------------------------------------------
// PGlite

export function pgliteSnapshotPath(): string {
  return join(tmpdir(), `svc-test-pglite-${preparedKey()}.tar`);
}

/** Writes the migrated PGlite dump unless it exists (or SVC_TEST_FRESH_PREPARED=1); returns its path. */
export async function preparePgliteSnapshot(force = fresh()): Promise<string> {
  const path = pgliteSnapshotPath();
  if (existsSync(path) && !force) return path;
  const [{ PGlite }, { drizzle }, { migrate }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
  const client = await PGlite.create('memory://');
  try {
    await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
    const dump = await client.dumpDataDir('none');
    // Written aside and renamed: a worker never reads half a file, and two writers leave one whole.
    const aside = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(aside, Buffer.from(await dump.arrayBuffer()));
    renameSync(aside, path);
  } finally {
    await client.close();
  }
  return path;
}

let snapshot: Promise<Blob> | null = null;

/** The migrated PGlite dump as a Blob (read once per test process). */
export function pgliteSnapshot(): Promise<Blob> {
  snapshot ??= preparePgliteSnapshot(false).then((path) => new Blob([readFileSync(path)]));
  return snapshot;
}

/** Makes `dir` (empty or absent) a migrated PGlite data directory, for a spawned `svc serve` or `svc seed`. */
export async function preparedDataDir(dir: string): Promise<string> {
  const { PGlite } = await import('@electric-sql/pglite');
  const client = await PGlite.create(dir, { loadDataDir: await pgliteSnapshot() });
  await client.close();
  return dir;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

export function templateName(): string {
  return `svc_test_tpl_${preparedKey()}`;
}

let template: Promise<string> | null = null;

/** The migrated template database on `url`'s server, made once (concurrent callers included). */
export function postgresTemplate(url: string, force = fresh()): Promise<string> {
  template ??= ensureTemplate(url, force).catch((err) => {
    template = null;
    throw err;
  });
  return template;
}

async function ensureTemplate(url: string, force: boolean): Promise<string> {
  const name = templateName();
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [found] = await admin`select 1 from pg_database where datname = ${name}`;
    if (found && !force) return name;
    // Built under a name of its own, then renamed: a reader sees the template whole or not at all.
    const building = `${name}_b${randomBytes(4).toString('hex')}`;
    await admin.unsafe(`CREATE DATABASE ${building}`);
    try {
      await migrateEmpty(withDatabase(url, building));
      if (found) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.unsafe(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (err) {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      // Another process renamed its own build first: that template is as good as ours.
      const [won] = await admin`select 1 from pg_database where datname = ${name}`;
      if (won) return name;
      throw err;
    }
    // Nobody stays connected to a template (CREATE DATABASE … TEMPLATE refuses while anyone is).
    await admin.unsafe(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    return name;
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** Drizzle's own migrator on an empty database: the schema only, no secret (runtime/data/migrate-postgres.ts makes the cursor secret). */
async function migrateEmpty(url: string): Promise<void> {
  const [{ drizzle }, { migrate }] = await Promise.all([import('drizzle-orm/postgres-js'), import('drizzle-orm/postgres-js/migrator')]);
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await client.end({ timeout: 5 });
  }
}

export function withDatabase(url: string, name: string): string {
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.toString();
}
