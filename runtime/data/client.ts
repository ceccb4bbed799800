// Opening the database: embedded PGlite (no DATABASE_URL) or PostgreSQL through postgres.js.
// Both paths share one schema, one set of migrations (the project's history, handed in as OpenConfig.migrationsFolder)
// and one small interface, so nothing above this file knows which driver runs.
//
// PGlite facts this file handles (see PITFALLS.md):
// - one connection: PGlite's own transaction mutex serialises transactions and queries; inside a
//   transaction only `tx` may be used (a query on the outer db would wait forever);
// - two processes on one data directory corrupt it: a lock file names the holder's pid;
// - db.execute() answers {rows} on PGlite and an array on postgres.js: `execute` wraps both.
import { closeSync, mkdirSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import { sql, type SQL } from 'drizzle-orm';
import type { Db, Row, Schema } from './db-types.ts';
import { ensureCursorSecret } from './cursor-secret.ts';
import { migrationsFolder as installedMigrationsFolder } from '../contract-facts.ts';
import { assertNotNewer, migrationsPending } from './migrations-pending.ts';
import { migratePostgres } from './migrate-postgres.ts';
import { unpipelined } from './unpipelined.ts';
import { describeUrl, isSessionConnection, WatermarkPoller, type ListenOptions, type NotificationMode } from './notifications.ts';
import { named, type ConnectionRole } from './application-name.ts';
import { observedStatements } from './statement-observer.ts';
import { usePreparedStatements, type PreparedStatementsSetting } from './prepared-statements.ts';
import { boundedTransactions, boundParameters, boundStatement, DEFAULT_TRANSACTION_BOUNDS, type TransactionBounds } from './transaction-bounds.ts';

export type { ListenOptions, NotificationMode } from './notifications.ts';

export type { Db, Row, Schema };

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Runs fn in one transaction (serialised on PGlite). Use only `tx` inside. */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** Raw SQL (a drizzle `sql` template or a string) -> rows, on either driver. */
  execute<R extends Row = Row>(query: SQL | string): Promise<R[]>;
  /**
   * Hear a channel across processes; resolves to an unlisten function. LISTEN where a session
   * connection exists; otherwise (PostgreSQL behind a transaction pooler, no DATABASE_DIRECT_URL) the
   * options' watermark is polled and fn gets '' when it moves (runtime/data/notifications.ts). A caller
   * that needs the cross-process bounds passes a watermark; the payload is then advisory.
   */
  listen(channel: string, fn: (payload: string) => void, options?: ListenOptions): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /** How listen hears other processes, and a sentence for the start-up log. */
  notifications: { mode: NotificationMode; description: string };
  /**
   * The same database on the background workers' own pool (application_name role `workers`), so
   * their work never queues behind requests; this very database on PGlite. Closed with it.
   */
  workers: Database;
  close(): Promise<void>;
}

export interface OpenConfig {
  /** PostgreSQL URL; null means embedded PGlite in dataDir. */
  databaseUrl: string | null;
  /** PGlite data directory; ':memory:' for an in-memory database. */
  dataDir: string;
  /** postgres.js pool size of requests (default 10). */
  poolMax?: number;
  /** postgres.js pool size of the background workers (default 3): `Database.workers`. */
  workerPoolMax?: number;
  /** What the main pool's connections are named for (application_name): `requests` (default), `seed` for svc seed. */
  role?: Extract<ConnectionRole, 'requests' | 'seed'>;
  /**
   * DATABASE_DIRECT_URL: PostgreSQL itself (a session connection), for LISTEN and migrations when
   * databaseUrl goes through a transaction pooler. Optional; checked at start.
   */
  directUrl?: string | null;
  /**
   * PGlite only: a data directory dumped by PGlite's dumpDataDir, loaded instead of running initdb
   * (an empty directory only). Migrations still run when pending. Tests load one migrated snapshot
   * (test/support/prepared.ts) rather than migrating every database from empty.
   */
  pgliteLoadDataDir?: Blob;
  /**
   * PostgreSQL only: statement_timeout and idle_in_transaction_session_timeout of every request and
   * worker connection (runtime/data/transaction-bounds.ts); default DEFAULT_TRANSACTION_BOUNDS.
   */
  transactionBounds?: TransactionBounds;
  /**
   * PostgreSQL only: named prepared statements (runtime/data/prepared-statements.ts); `auto` (default)
   * names them on a session connection, never through a transaction pooler.
   */
  preparedStatements?: PreparedStatementsSetting;
  /**
   * The project's migration history, an absolute path (Registry.migrationsFolder); default the one
   * installed for this process (runtime/contract-facts.ts installMigrationsFolder).
   */
  migrationsFolder?: string;
}

/** rows of a db.execute() result on either driver ({rows} on PGlite, an array on postgres.js). */
export function rowsOf<R extends Row = Row>(result: unknown): R[] {
  if (Array.isArray(result)) return [...result] as R[];
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as R[]) : [];
}

/** Raw SQL on any Db (a transaction included) -> rows. */
export async function executeRows<R extends Row = Row>(db: Db, query: SQL | string): Promise<R[]> {
  const q = typeof query === 'string' ? sql.raw(query) : query;
  return rowsOf<R>(await db.execute(q));
}

const CHANNEL_RE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
function checkChannel(channel: string): void {
  if (!CHANNEL_RE.test(channel)) throw new Error(`invalid LISTEN/NOTIFY channel name "${channel}"`);
}

// Each driver's modules are loaded by the databases that use it only (a PostgreSQL server needs
// none of PGlite's, and the reverse): fewer modules before the first answer.
const pgliteDriver = () => {
  baselineWasm();
  return Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite'), import('drizzle-orm/pglite/migrator')]);
};

/**
 * PGlite's Postgres is a large WebAssembly module that every process compiles anew. On V8 before 13
 * (Node 20 and 22), its baseline compiler alone (--liftoff-only) brings the first answer of
 * `svc serve` on PGlite 0.17-0.25 s sooner (Node 20: 0.87 -> 0.64 s; Node 22: 0.69 -> 0.52 s, our
 * 2-core machine) for about 10% less GET /v1/meta throughput on PGlite once warm; Node 24's V8 starts
 * it as fast without the flag, so there it is left alone. The embedded store serves the demo,
 * development and tests, where start-up counts; production runs on PostgreSQL.
 * SVC_PGLITE_OPTIMIZING=1 keeps V8's optimising tier. Set before the module is compiled.
 */
function baselineWasm(): void {
  const v8Major = Number(process.versions.v8.split('.')[0]);
  if (v8Major < 13 && process.env.SVC_PGLITE_OPTIMIZING !== '1') setFlagsFromString('--liftoff-only');
}

const postgresDriver = () => Promise.all([import('postgres'), import('drizzle-orm/postgres-js'), import('drizzle-orm/postgres-js/migrator')]);

export async function openDatabase(config: OpenConfig): Promise<Database> {
  const migrationsFolder = config.migrationsFolder ?? installedMigrationsFolder();
  if (!config.databaseUrl) return openPglite(config.dataDir, migrationsFolder, config.pgliteLoadDataDir);
  // Pool sizes: not contract limits (docs/fleet.md counts the connections of a process).
  return openPostgres(
    config.databaseUrl,
    { requests: config.poolMax ?? 10, workers: config.workerPoolMax ?? 3, role: config.role ?? 'requests' }, // not a contract limit: pool sizes
    config.directUrl ?? null,
    config.transactionBounds ?? DEFAULT_TRANSACTION_BOUNDS,
    config.preparedStatements ?? 'auto',
    migrationsFolder,
  );
}

// ---------------------------------------------------------------------------------------------
// PGlite

async function openPglite(dataDir: string, migrationsFolder: string, loadDataDir?: Blob): Promise<Database> {
  const memory = dataDir === ':memory:' || dataDir.startsWith('memory://');
  const [{ PGlite }, { drizzle: drizzlePglite }, { migrate: migratePglite }] = await pgliteDriver();
  let lock: DataDirLock | null = null;
  if (!memory) {
    lock = acquireDataDirLock(dataDir);
  }
  let client: PGlite;
  try {
    client = await PGlite.create(memory ? 'memory://' : resolve(dataDir), loadDataDir ? { loadDataDir } : {});
  } catch (err) {
    lock?.release();
    throw err;
  }
  const db = drizzlePglite({ client });
  try {
    // A database migrated by a newer build is refused (SchemaNewerError), before and after migrating.
    const execute = (q: SQL) => executeRows(db as unknown as Db, q);
    if (await migrationsPending(execute, migrationsFolder)) {
      await migratePglite(db, { migrationsFolder });
      await assertNotNewer(execute, migrationsFolder);
    }
    await ensureCursorSecret(db as unknown as Db);
  } catch (err) {
    await client.close().catch(() => {});
    lock?.release();
    throw err;
  }
  let closed = false;
  const database: Database = {
    db: db as unknown as Db,
    kind: 'pglite',
    transaction: (fn) => db.transaction((tx) => fn(tx as unknown as Db)),
    execute: (query) => executeRows(db as unknown as Db, query),
    async listen(channel, fn) {
      checkChannel(channel);
      const unlisten = await client.listen(channel, fn);
      return async () => {
        if (!closed) await unlisten();
      };
    },
    async notify(channel, payload) {
      checkChannel(channel);
      await client.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    notifications: { mode: 'in-process', description: 'notifications: PGlite, one process (LISTEN in process)' },
    get workers() {
      return database;
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
  return database;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL (postgres.js)

/** How long the start-up check waits to hear its own NOTIFY (PostgreSQL answers in milliseconds). */
const DIRECT_CHECK_MS = 2000; // not a contract limit
const POOLED_CHECK_MS = 1000; // not a contract limit

/**
 * PostgreSQL through postgres.js. Every statement on `url` must be valid on any server connection,
 * since `url` may be a transaction pooler (PgBouncer in transaction mode): so no named prepared
 * statements unless `url` is proven a session connection or the operator says the pooler keeps them
 * (runtime/data/prepared-statements.ts: a pooler hands the next transaction another server
 * connection, where a statement name means another statement or nothing, and writes were lost
 * silently), no pipelining (runtime/data/unpipelined.ts: a pipelined query's answer was lost behind
 * PgBouncer and its request hung), no session advisory lock (migrations take a transaction lock),
 * no session SET, and LISTEN only on a connection proven to be a session one
 * (runtime/data/notifications.ts).
 */
async function openPostgres(
  url: string,
  pools: { requests: number; workers: number; role: ConnectionRole },
  directUrl: string | null,
  bounds: TransactionBounds,
  prepareSetting: PreparedStatementsSetting,
  migrationsFolder: string,
): Promise<Database> {
  const driver = await postgresDriver();
  const [{ default: postgres }, { drizzle: drizzlePostgres }] = driver;
  const options = { prepare: false, onnotice: () => {} };
  // Without DATABASE_DIRECT_URL, is `url` PostgreSQL itself (a session connection) or a transaction pooler?
  const probe = directUrl ? { session: false, startupBounds: false } : await probeUrl(postgres as never, url, bounds);
  const urlIsSession = probe.session;
  // Every transaction bounded (runtime/data/transaction-bounds.ts): startup parameters where the
  // server takes them, SET LOCAL in each transaction through a pooler.
  const bounded = (role: ConnectionRole) =>
    probe.startupBounds ? { connection: { ...named(role).connection, ...boundParameters(bounds) } } : named(role);
  const perTransaction = probe.startupBounds ? null : boundStatement(bounds);
  // Named statements where the connection is a session of its own (or where the operator says the
  // pooler keeps them): one round trip a statement instead of two.
  const prepare = usePreparedStatements(prepareSetting, urlIsSession);
  const driven = (c: ReturnType<typeof postgres>) => boundedTransactions(observedStatements(c, prepare), perTransaction);
  // One pool for requests, one for the background workers, each named (runtime/data/application-name.ts);
  // postgres.js opens a pool's connections only when it first needs them.
  const client = postgres(url, { max: pools.requests, ...options, prepare, ...bounded(pools.role) });
  const workerClient = postgres(url, { max: pools.workers, ...options, prepare, ...bounded('workers') });
  const db = drizzlePostgres({ client: unpipelined(driven(client), pools.requests) });
  const workersDb = drizzlePostgres({ client: unpipelined(driven(workerClient), pools.workers) });
  const transaction = <T>(fn: (tx: Db) => Promise<T>): Promise<T> => db.transaction((tx) => fn(tx as unknown as Db));
  const execute = <R extends Row = Row>(query: SQL | string) => executeRows<R>(db as unknown as Db, query);
  /** The session connection LISTEN runs on (its own, named `listener`), when there is one. */
  let listener: ReturnType<typeof postgres> | null = null;
  let poller: WatermarkPoller | null = null;
  const endAll = () => Promise.all([client.end({ timeout: 5 }), workerClient.end({ timeout: 5 }), listener?.end({ timeout: 5 })]);
  try {
    let mode: NotificationMode;
    let description: string;
    if (directUrl) {
      if (!(await isSessionConnection(postgres as never, directUrl, DIRECT_CHECK_MS, named('listener')))) {
        throw new Error(
          `DATABASE_DIRECT_URL (${describeUrl(directUrl)}) is not a session connection: a LISTEN on it did not hear its own NOTIFY within ${DIRECT_CHECK_MS} ms, ` +
            'as happens through a transaction pooler. Point DATABASE_DIRECT_URL at PostgreSQL itself (not PgBouncer), or unset it to let the process poll instead.',
        );
      }
      listener = postgres(directUrl, { max: 1, ...options, ...named('listener') });
      mode = 'listen';
      description = `notifications: LISTEN on DATABASE_DIRECT_URL (${describeUrl(directUrl)}); requests on DATABASE_URL (${describeUrl(url)})`;
    } else if (urlIsSession) {
      listener = postgres(url, { max: 1, ...options, ...named('listener') });
      mode = 'listen+poll';
      description = `notifications: LISTEN on DATABASE_URL (${describeUrl(url)}, a session connection) and polling every 500 ms; behind a transaction pooler set DATABASE_DIRECT_URL`;
    } else {
      mode = 'poll';
      description = `notifications: DATABASE_URL (${describeUrl(url)}) is not a session connection (a transaction pooler?) and DATABASE_DIRECT_URL is unset: polling the database every 500 ms instead of LISTEN`;
    }
    // Up to date (every start but the first after a migration lands): two reads, no lock. A database
    // migrated by a newer build is refused (SchemaNewerError), before and after migrating (another
    // process may have migrated further while this one waited for the lock).
    if (await migrationsPending((q) => execute(q), migrationsFolder)) {
      await migrateOn(postgres, drizzlePostgres, directUrl ?? url, migrationsFolder);
      await assertNotNewer((q) => execute(q), migrationsFolder);
    } else await ensureCursorSecret(db as unknown as Db);
    // The poller runs on the workers' pool: a saturated request pool must not delay what other processes committed.
    if (mode !== 'listen') poller = new WatermarkPoller((q) => executeRows(workersDb as unknown as Db, q));
    const listenOn = listener;
    const stopPoller = poller;
    const shared = {
      kind: 'postgres' as const,
      async listen(channel: string, fn: (payload: string) => void, options?: ListenOptions) {
        checkChannel(channel);
        const stops: (() => Promise<void>)[] = [];
        if (listenOn) {
          const sub = await listenOn.listen(channel, (payload) => fn(payload));
          stops.push(() => sub.unlisten());
        }
        if (stopPoller && options?.watermark !== undefined) {
          const remove = await stopPoller.add(channel, options.watermark, fn);
          stops.push(async () => remove());
        }
        return async () => {
          for (const stop of stops) await stop();
        };
      },
      async notify(channel: string, payload: string) {
        checkChannel(channel);
        await client.notify(channel, payload);
      },
      notifications: { mode, description: `${description}; ${prepare ? 'named prepared statements' : 'unnamed statements (two round trips each)'}` },
    };
    const workers: Database = {
      ...shared,
      db: workersDb as unknown as Db,
      transaction: (fn) => workersDb.transaction((tx) => fn(tx as unknown as Db)),
      execute: (query) => executeRows(workersDb as unknown as Db, query),
      get workers() {
        return workers;
      },
      close: async () => undefined, // closed with the database
    };
    const database: Database = {
      ...shared,
      db: db as unknown as Db,
      transaction,
      execute,
      workers,
      async close() {
        stopPoller?.stop();
        await endAll();
      },
    };
    return database;
  } catch (err) {
    poller?.stop();
    await endAll();
    throw err;
  }
}

/**
 * Whether `url` is a session connection (a LISTEN hears its own NOTIFY), and whether it takes the
 * transaction bounds as startup parameters: PostgreSQL does; PgBouncer refuses any it does not know
 * ("unsupported startup parameter"), in session mode too, and is then asked again without them.
 */
async function probeUrl(postgres: never, url: string, bounds: TransactionBounds): Promise<{ session: boolean; startupBounds: boolean }> {
  const params = boundParameters(bounds);
  try {
    const session = await isSessionConnection(postgres, url, POOLED_CHECK_MS, { connection: { ...named('listener').connection, ...params } });
    return { session, startupBounds: session && Object.keys(params).length > 0 };
  } catch (err) {
    if (Object.keys(params).length === 0 || !/unsupported startup parameter/i.test(err instanceof Error ? err.message : String(err))) throw err;
    return { session: await isSessionConnection(postgres, url, POOLED_CHECK_MS, named('listener')), startupBounds: false };
  }
}

/**
 * Every pending migration in one transaction (runtime/data/migrate-postgres.ts), on a connection of its
 * own named `migrate` (DATABASE_DIRECT_URL when set), closed when done.
 */
async function migrateOn(
  postgres: Awaited<ReturnType<typeof postgresDriver>>[0]['default'],
  drizzlePostgres: Awaited<ReturnType<typeof postgresDriver>>[1]['drizzle'],
  url: string,
  migrationsFolder: string,
): Promise<void> {
  const migrator = postgres(url, { max: 1, prepare: false, onnotice: () => {}, ...named('migrate') });
  try {
    const migrating = drizzlePostgres({ client: migrator });
    await migratePostgres({ transaction: (fn) => migrating.transaction((tx) => fn(tx as unknown as Db)) }, migrationsFolder);
  } finally {
    await migrator.end({ timeout: 5 });
  }
}

// ---------------------------------------------------------------------------------------------
// Lock file: one process per PGlite data directory (pglite#884, #1106).

export const LOCK_FILE_NAME = 'svc.lock';

export class DataDirLockedError extends Error {
  readonly holderPid: number;
  constructor(dataDir: string, holderPid: number) {
    super(
      `The data directory ${dataDir} is in use by process ${holderPid}. ` +
        `Two processes must never open one PGlite directory: stop that process (svc serve / svc seed), ` +
        `or use another SVC_DATA_DIR, or set DATABASE_URL.`,
    );
    this.name = 'DataDirLockedError';
    this.holderPid = holderPid;
  }
}

interface DataDirLock {
  path: string;
  release(): void;
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the process started, in clock ticks since boot (field 22 of /proc/<pid>/stat), or null where
 * there is no /proc. With the pid it names one process: a pid reused by another process after a
 * crash has another start time.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so count after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** The lock's holder is this very process still running (not a later process that got its pid). */
function holderAlive(holder: { pid: number; processStart: string | null }): boolean {
  if (!pidAlive(holder.pid)) return false;
  if (holder.processStart === null) return true; // no /proc where the lock was written: the pid is all we have
  const now = processStart(holder.pid);
  return now === null || now === holder.processStart;
}

function readLock(path: string): { pid: number; token: string; processStart: string | null } | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; token?: unknown; processStart?: unknown };
    return {
      pid: Number(parsed.pid),
      token: String(parsed.token ?? ''),
      processStart: typeof parsed.processStart === 'string' ? parsed.processStart : null,
    };
  } catch {
    return null;
  }
}

const heldLocks = new Set<string>();
let exitHookInstalled = false;

function acquireDataDirLock(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const real = realpathSync(dataDir);
  const path = join(real, LOCK_FILE_NAME);
  const token = randomBytes(12).toString('hex');
  const content = JSON.stringify({ pid: process.pid, processStart: processStart(process.pid), token, startedAt: new Date().toISOString() });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      try {
        writeSync(fd, content);
      } finally {
        closeSync(fd);
      }
      heldLocks.add(path);
      if (!exitHookInstalled) {
        exitHookInstalled = true;
        process.once('exit', () => {
          for (const p of heldLocks) {
            try {
              unlinkSync(p);
            } catch {
              /* already gone */
            }
          }
        });
      }
      return {
        path,
        release() {
          if (!heldLocks.delete(path)) return;
          if (readLock(path)?.token === token) {
            try {
              unlinkSync(path);
            } catch {
              /* already gone */
            }
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readLock(path);
      if (holder && holderAlive(holder)) throw new DataDirLockedError(real, holder.pid);
      // A lock left by a dead process, by a process whose pid was since reused (another start
      // time), or unreadable (a crash mid-write): take it over.
      try {
        unlinkSync(path);
      } catch {
        /* someone else removed it first; retry */
      }
    }
  }
  const holder = readLock(path);
  throw new DataDirLockedError(real, holder?.pid ?? -1);
}
