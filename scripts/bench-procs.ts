// Servers in their own processes, and autocannon to drive them (issue 16: a ratio counts only when
// the baseline is driven to its limit, and a load generator in the server's process cannot do that).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '../test/support/process.ts';

const BIN = new URL('../bin/svc.js', import.meta.url).pathname;
const BARE = new URL('./bare-hono.mjs', import.meta.url).pathname;
const PEER = new URL('./peer-reads.mjs', import.meta.url).pathname;

/** Resident memory of a process in MB (Linux /proc), or NaN. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function waitFor(url: string, headers: Record<string, string>, child: ChildProcess, started: number): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited ${child.exitCode}`);
    try {
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - started;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 60_000) throw new Error(`${url} did not answer within 60 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface Proc {
  url: string;
  pid: number;
  /** Spawn to the first 200 of the probe URL, in ms. */
  startupMs: number;
  stop(): Promise<void>;
}

function stopper(child: ChildProcess, cleanup: () => void | Promise<void> = () => undefined): () => Promise<void> {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await cleanup();
  };
}

export interface SvcProc extends Proc {
  operatorKey: string;
}

/** `svc seed` then `svc serve` on a fresh PGlite directory (or the given PostgreSQL URL), rate limit out of the way; `env` adds to the server's environment. */
export async function startSvc(options: { databaseUrl?: string; env?: Record<string, string> } = {}): Promise<SvcProc> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const port = await freePort();
  const env = {
    ...process.env,
    SVC_DATA_DIR: dataDir,
    DATABASE_URL: options.databaseUrl ?? '',
    PORT: String(port),
    SVC_RATE_LIMIT_PER_MINUTE: '100000000',
    NODE_ENV: 'production',
  };
  const seeded = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'seed', '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`svc seed exited ${code}`))));
  });
  const { operatorKey } = JSON.parse(seeded.trim().split('\n').at(-1)!) as { operatorKey: string };
  const served = await spawnServe({ ...env, ...options.env }, port, operatorKey, () => rmSync(dataDir, { recursive: true, force: true }));
  return { ...served, operatorKey };
}

/** `svc serve --port` in its own process with env, timed from spawn to the first 200 of GET /v1/meta with probeKey. */
export async function spawnServe(env: NodeJS.ProcessEnv, port: number, probeKey: string, cleanup?: () => void, nodeArgs: string[] = [], bin = BIN): Promise<Proc> {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve', '--port', String(port)], { env, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const startupMs = await waitFor(`${url}/v1/meta`, { authorization: `Bearer ${probeKey}` }, child, started);
  return { url, pid: child.pid!, startupMs, stop: stopper(child, cleanup) };
}

/** `svc serve` in its own process on an existing (already seeded) PostgreSQL database; `bin`: another checkout's bin/svc.js (scripts/write-cpu.ts --against). */
export async function serveExisting(databaseUrl: string, probeKey: string, extraEnv: Record<string, string> = {}, nodeArgs: string[] = [], bin = BIN): Promise<Proc> {
  const port = await freePort();
  const env = { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), SVC_RATE_LIMIT_PER_MINUTE: '100000000', NODE_ENV: 'production', ...extraEnv };
  return spawnServe(env, port, probeKey, undefined, nodeArgs, bin);
}

/** A bare Hono app on @hono/node-server answering GET /v1/meta with the given body (plain JavaScript, no tsx). */
export async function startBare(body: string): Promise<Proc> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [BARE], { env: { ...process.env, PORT: String(port), BODY: body }, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const startupMs = await waitFor(`${url}/v1/meta`, {}, child, started);
  return { url, pid: child.pid!, startupMs, stop: stopper(child) };
}

/**
 * The same-work peer of GET /v1/meta (peer-reads.mjs) in its own process: key by SHA-256, per-credential
 * window, the contract's headers, the body, batched audit rows to PGlite in its process (no
 * databaseUrl: a fresh directory, as svc's embedded default) or to the PostgreSQL database given.
 */
export async function startPeer(options: { key: string; body: string; databaseUrl?: string }): Promise<Proc> {
  const port = await freePort();
  const dir = options.databaseUrl ? '' : mkdtempSync(join(tmpdir(), 'svc-peer-'));
  const started = performance.now();
  const env = { ...process.env, PORT: String(port), KEY: options.key, BODY: options.body, DATABASE_URL: options.databaseUrl ?? '', PGLITE_DIR: dir, RATE_LIMIT: '100000000' };
  const child = spawn(process.execPath, [PEER], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const startupMs = await waitFor(`${url}/v1/meta`, { authorization: `Bearer ${options.key}` }, child, started);
  return { url, pid: child.pid!, startupMs, stop: stopper(child, () => { if (dir) rmSync(dir, { recursive: true, force: true }); }) };
}

export interface CannonResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** The server process's CPU use during the run, in cores (NaN when no serverPid was given). */
  serverCpu: number;
}

/** Clock ticks a second of /proc/<pid>/stat's CPU times (USER_HZ: 100 on Linux, as `getconf CLK_TCK` says). */
const CLK_TCK = 100;

/** CPU seconds (user + system) a process has used so far (Linux /proc), or NaN. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ": field 3 (state) is index 0, so utime (14) and stime (15) are 11 and 12.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/**
 * A server counts as driven to its limit when its process kept a core busy (90% or more) during the
 * run. More connections adding no throughput is not enough: on two cores the load generator can be
 * the limit while the server idles (bare Hono at 40k req/s used two thirds of a core here).
 */
export const SATURATED_CPU = 0.9;

export async function cannon(options: {
  url: string;
  connections: number;
  seconds: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Requests a second across all connections (an open rate instead of as fast as possible). */
  overallRate?: number;
  /** The server's process: its CPU use during the run is reported (serverCpu, in cores). */
  serverPid?: number;
}): Promise<CannonResult> {
  const cpuBefore = options.serverPid ? cpuSeconds(options.serverPid) : NaN;
  const startedAt = performance.now();
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    overallRate: options.overallRate,
  });
  return {
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    serverCpu: options.serverPid ? (cpuSeconds(options.serverPid) - cpuBefore) / ((performance.now() - startedAt) / 1000) : NaN,
  };
}

export function line(label: string, r: CannonResult): string {
  const cpu = Number.isFinite(r.serverCpu) ? `  server CPU ${(r.serverCpu * 100).toFixed(0).padStart(3)}% of a core` : '';
  return `${label.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(1).padStart(5)} ms  p99 ${r.p99Ms.toFixed(1).padStart(6)} ms${cpu}${r.non2xx || r.errors ? `  (${r.non2xx} non-2xx, ${r.errors} errors)` : ''}`;
}
