// A fleet for tests (docs/fleet.md): PgBouncer 1.18 (Debian package) in transaction mode in front of a
// fresh database on DATABASE_URL's server, three `svc serve` processes with DATABASE_URL -> PgBouncer,
// Redis for the shared rate limit, and HAProxy round-robin in front (checks /v1/health, readiness).
// Real engines, started and stopped here; the suites skip with fleetMissing()'s reason otherwise.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freshPostgresDatabase } from './db.ts';
import { freePort, runSvc, serveSvc, stopped } from './process.ts';
import { redisAnswers } from './redis.ts';

export const PGBOUNCER_BIN = '/usr/sbin/pgbouncer';
export const HAPROXY_BIN = '/usr/sbin/haproxy';
export const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** Why the fleet suite cannot run here, or null. */
export async function fleetMissing(): Promise<string | null> {
  if (!process.env.DATABASE_URL) return 'needs PostgreSQL (DATABASE_URL): a fleet shares one database';
  if (!existsSync(PGBOUNCER_BIN)) return `${PGBOUNCER_BIN} is not installed (apt-get install -y pgbouncer; .ci/run installs it)`;
  if (!existsSync(HAPROXY_BIN)) return `${HAPROXY_BIN} is not installed (apt-get install -y haproxy; .ci/run installs it)`;
  if (!(await redisAnswers(REDIS_URL))) return `Redis does not answer at ${REDIS_URL} (the shared rate limit)`;
  return null;
}

async function waitFor(what: string, child: ChildProcess, errors: () => string, ready: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited ${child.exitCode}: ${errors()}`);
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${ms} ms: ${errors()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return stopped(child, 'SIGTERM');
}

export interface PgBouncer {
  /** postgres://…@127.0.0.1:<port>/<db>: the pooled URL. */
  url(database: string): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer in transaction mode (or `poolMode`) in front of `backend` (host:port of PostgreSQL), trust auth, its
 * default settings otherwise (the config of ../shared/reviews/scale-probes.md). Runs as user postgres
 * when this process is root (PgBouncer refuses to run as root).
 */
export async function startPgBouncer(backend: URL, poolMode: 'transaction' | 'session' = 'transaction'): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(backend.username || 'postgres');
  const ini = `[databases]
* = host=${backend.hostname} port=${backend.port || 5432}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, 'users.txt')}
pool_mode = ${poolMode}
default_pool_size = 20
max_client_conn = 500
ignore_startup_parameters = extra_float_digits,options
`;
  writeFileSync(join(dir, 'pgbouncer.ini'), ini);
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  const root = process.getuid?.() === 0;
  if (root) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chmodSync(dir, 0o755);
    for (const f of ['', 'pgbouncer.ini', 'users.txt']) chownSync(join(dir, f), Number(ids.stdout.trim()), Number(gid.stdout.trim()));
  }
  const [cmd, args] = root ? ['runuser', ['-u', 'postgres', '--', PGBOUNCER_BIN, join(dir, 'pgbouncer.ini')]] : [PGBOUNCER_BIN, [join(dir, 'pgbouncer.ini')]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (d) => (errors = (errors + d).slice(-4000)));
  const url = (database: string) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('pgbouncer', child, () => errors, async () => {
      const sql = postgres(url(backend.pathname.slice(1) || 'postgres'), { max: 1, prepare: false, connect_timeout: 2, onnotice: () => {} });
      try {
        await sql`select 1`;
        return true;
      } finally {
        await sql.end({ timeout: 1 });
      }
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

export interface HaProxy {
  url: string;
  stop(): Promise<void>;
}

/** HAProxy round-robin over `ports`, each checked on /v1/health (readiness) every 200 ms. */
export async function startHaProxy(ports: number[]): Promise<HaProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-haproxy-'));
  const front = await freePort();
  const cfg = `global
  log stdout format raw local0 err
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 0
frontend api
  bind 127.0.0.1:${front}
  default_backend svc
backend svc
  balance roundrobin
  option httpchk GET /v1/health
  http-check expect status 200
  default-server inter 200ms fall 2 rise 2
${ports.map((p, i) => `  server s${i} 127.0.0.1:${p} check`).join('\n')}
`;
  writeFileSync(join(dir, 'haproxy.cfg'), cfg);
  const child = spawn(HAPROXY_BIN, ['-f', join(dir, 'haproxy.cfg'), '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (d) => (errors = (errors + d).slice(-4000)));
  const url = `http://127.0.0.1:${front}`;
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('haproxy', child, () => errors, async () => (await fetch(`${url}/v1/health`)).status === 200);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

export interface FleetProcess {
  child: ChildProcess;
  port: number;
  url: string;
}

export interface Fleet {
  /** The fresh database on PostgreSQL itself (its URL is DATABASE_DIRECT_URL when `direct`). */
  directUrl: string;
  /** The same database through PgBouncer (every process's DATABASE_URL). */
  pooledUrl: string;
  procs: FleetProcess[];
  /** HAProxy's address: round-robin over procs. */
  url: string;
  operatorKey: string;
  clientId: string;
  /** `svc seed --json`'s output (operatorKey, serviceKey bound to clientId, otherClientId, …). */
  seed: SeedOutput;
  env: Record<string, string>;
  /** Starts one more process like the others (after a kill -9, say); HAProxy does not know it. */
  serve(): Promise<FleetProcess>;
  stop(): Promise<void>;
}

export interface SeedOutput {
  operatorKey: string;
  operatorKeyId: string;
  serviceKey: string;
  serviceKeyId: string;
  clientId: string;
  otherClientId: string;
}

export interface FleetOptions {
  processes?: number;
  /** Set DATABASE_DIRECT_URL on every process (default false: the pooled URL only). */
  direct?: boolean;
  env?: Record<string, string>;
}

export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    // Empty, not the prepared template: the fleet keeps the migration path through the pooler tested.
    const fresh = await freshPostgresDatabase(process.env.DATABASE_URL!, { empty: true });
    cleanups.push(() => fresh.drop());
    const bouncer = await startPgBouncer(new URL(process.env.DATABASE_URL!));
    cleanups.push(() => bouncer.stop());
    const pooledUrl = bouncer.url(new URL(fresh.url).pathname.slice(1));
    const env: Record<string, string> = {
      DATABASE_URL: pooledUrl,
      REDIS_URL,
      SVC_WEBHOOK_ALLOW_PRIVATE: 'true',
      ...(options.direct ? { DATABASE_DIRECT_URL: fresh.url } : {}),
      ...options.env,
    };
    // The seed migrates through the pooler (one transaction under a transaction advisory lock).
    const seeded = JSON.parse((await runSvc(['seed', '--json'], env)).trim().split('\n').at(-1)!) as SeedOutput;
    const procs: FleetProcess[] = [];
    const serve = async () => {
      const port = await freePort();
      const child = await serveSvc(env, port);
      cleanups.push(() => stopped(child, 'SIGKILL'));
      const proc = { child, port, url: `http://127.0.0.1:${port}` };
      return proc;
    };
    const n = options.processes ?? 3;
    const started = await Promise.all(Array.from({ length: n }, () => serve()));
    procs.push(...started);
    const proxy = await startHaProxy(procs.map((p) => p.port));
    cleanups.push(() => proxy.stop());
    return { directUrl: fresh.url, pooledUrl, procs, url: proxy.url, operatorKey: seeded.operatorKey, clientId: seeded.clientId, seed: seeded, env, serve, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
