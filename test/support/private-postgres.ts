// A PostgreSQL 15 cluster of a test's own: initdb into a temporary directory, started with pg_ctl on
// a free loopback port, stopped and removed by stop(). For tests that must do what would disturb
// other tests on the shared server (127.0.0.1:5432): hold the events feed's horizon, which is
// cluster-wide (docs/testing.md), prepare transactions, change server settings. Run as the postgres
// user when this process is root (initdb and postgres refuse to run as root).
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from './process.ts';

export const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust auth). */
  url(database?: string): string;
  port: number;
  /** Creates a database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

const root = () => process.getuid?.() === 0;

/** Why a private cluster cannot start here, or null. */
export function privatePostgresMissing(): string | null {
  for (const bin of ['initdb', 'pg_ctl', 'postgres']) if (!existsSync(join(PG_BIN_DIR, bin))) return `${join(PG_BIN_DIR, bin)} is not installed (apt-get install -y postgresql-15)`;
  if (root() && spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root and there is no postgres user to run initdb as';
  return null;
}

/** Runs a PostgreSQL binary (as postgres when root) to its end; throws with its output on failure. */
function run(bin: string, args: string[]): void {
  const [cmd, argv] = root() ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN_DIR, bin), ...args]] : [join(PG_BIN_DIR, bin), args];
  const result = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} exited ${result.status}: ${result.stderr || result.stdout}`);
}

/**
 * initdb + pg_ctl start with `settings` (postgresql.conf lines, e.g. { max_prepared_transactions: '4' })
 * on top of fast test defaults (no fsync, no autovacuum), listening on 127.0.0.1 only.
 */
export async function startPrivatePostgres(settings: Record<string, string> = {}): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-private-pg-'));
  const data = join(dir, 'data');
  if (root()) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let started = false;
  // Synchronous to its end, so that it also runs when the test process exits without stopping it.
  const stopNow = () => {
    process.off('exit', stopNow);
    if (started) {
      started = false;
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
      } catch {
        /* already stopped */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const stop = async () => stopNow();
  process.once('exit', stopNow);
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    const conf = { listen_addresses: "'127.0.0.1'", port: String(port), unix_socket_directories: `'${dir}'`, fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', autovacuum: 'off', ...settings };
    writeFileSync(join(data, 'postgresql.auto.conf'), Object.entries(conf).map(([k, v]) => `${k} = ${v}\n`).join(''));
    if (root()) spawnSync('chown', ['postgres:postgres', join(data, 'postgresql.auto.conf')]);
    run('pg_ctl', ['start', '-D', data, '-l', join(dir, 'log'), '-w', '-t', '60']);
    started = true;
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    port,
    async createDatabase(name) {
      const admin = postgres(url(), { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`create database ${name}`);
      } finally {
        await admin.end({ timeout: 5 });
      }
      return url(name);
    },
    stop,
  };
}
