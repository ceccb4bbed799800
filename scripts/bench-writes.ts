// The write line of `npm run bench` (issue 24; docs/writes.md): POST /v1/tasks with a fresh
// Idempotency-Key each, on PostgreSQL, against a hand-written same-work peer (scripts/peer-writes.mjs),
// each in its own process, driven by the same autocannon at 1, 4, 16 and 64 connections; writes/s,
// p50/p99, the ratio, and statements (round trips) per write (scripts/count-writes.ts). Then two
// svc processes on one database (16 connections each) against one process at 32. Printed, never
// asserted. Needs DATABASE_URL (a database of its own is made and dropped).
//   node --import tsx scripts/bench-writes.ts [--quick]
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { freePort } from '../test/support/process.ts';
import { freshPostgresDatabase } from '../test/support/db.ts';
import { seedDemo } from './bench-load.ts';
import { cpuSeconds, serveExisting, type Proc } from './bench-procs.ts';

const PEER = new URL('./peer-writes.mjs', import.meta.url).pathname;
const COUNT = new URL('./count-writes.ts', import.meta.url).pathname;

interface WriteResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  bad: number;
  serverCpu: number;
}

async function startPeer(databaseUrl: string): Promise<Proc> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [PEER], { env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port) }, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`peer-writes exited ${child.exitCode}`);
    const ok = await fetch(`${url}/v1/meta`).then((r) => r.ok, () => false);
    if (ok) break;
    if (performance.now() - started > 30_000) throw new Error('peer-writes did not answer within 30 s');
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url,
    pid: child.pid!,
    startupMs: performance.now() - started,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** POST /v1/tasks as fast as `connections` allow, each request with a new Idempotency-Key. */
async function writes(target: Proc, key: string, clientId: string, connections: number, seconds: number): Promise<WriteResult> {
  const cpuBefore = cpuSeconds(target.pid);
  const started = performance.now();
  const result = await autocannon({
    url: target.url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/tasks',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'bench write', clientId }),
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }),
      },
    ],
  });
  return {
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    bad: result.non2xx + result.errors + result.timeouts,
    serverCpu: (cpuSeconds(target.pid) - cpuBefore) / ((performance.now() - started) / 1000),
  };
}

const fmt = (r: WriteResult) =>
  `${r.rps.toFixed(0).padStart(6)} (${r.p50Ms.toFixed(0)} / ${r.p99Ms.toFixed(0)} ms, CPU ${(r.serverCpu * 100).toFixed(0)}%)${r.bad ? ` [${r.bad} failed]` : ''}`;

export async function benchWrites(options: { databaseUrl: string; quick: boolean }): Promise<void> {
  const seconds = options.quick ? 3 : 10;
  const levels = options.quick ? [1, 16] : [1, 4, 16, 64];
  const counted = spawnSync(process.execPath, ['--import', 'tsx', COUNT, '30', '--json'], { encoding: 'utf8' });
  const perWrite = counted.status === 0 ? (JSON.parse(counted.stdout.trim().split('\n').at(-1)!) as { write: number; replay: number }) : null;
  console.log(
    perWrite
      ? `statements (round trips) per POST /v1/tasks: ${perWrite.write.toFixed(1)} a new write, ${perWrite.replay.toFixed(1)} a replay, BEGIN/COMMIT included (scripts/count-writes.ts); the peer: 7 (BEGIN, 5, COMMIT)`
      : `count-writes failed: ${counted.stderr.trim().split('\n').at(-1)}`,
  );

  const fresh = await freshPostgresDatabase(options.databaseUrl);
  const procs: Proc[] = [];
  try {
    const seeded = (await seedDemo({ ...process.env, DATABASE_URL: fresh.url })) as { operatorKey: string; clientId: string };
    const svc = await serveExisting(fresh.url, seeded.operatorKey);
    procs.push(svc);
    const peer = await startPeer(fresh.url);
    procs.push(peer);
    // Warm both (key cache, prepared statements, JIT).
    await writes(svc, seeded.operatorKey, seeded.clientId, 4, 1);
    await writes(peer, seeded.operatorKey, seeded.clientId, 4, 1);
    console.log('connections  svc writes/s (p50 / p99)        peer writes/s (p50 / p99)       ratio  p99 ratio');
    for (const c of levels) {
      const a = await writes(svc, seeded.operatorKey, seeded.clientId, c, seconds);
      const b = await writes(peer, seeded.operatorKey, seeded.clientId, c, seconds);
      console.log(`${String(c).padStart(11)}  ${fmt(a).padEnd(30)}  ${fmt(b).padEnd(30)}  ${(a.rps / b.rps).toFixed(2).padStart(5)}  ${(a.p99Ms / b.p99Ms).toFixed(1).padStart(8)}x`);
    }
    console.log('targets: ratio >= 0.5 at 16, >= 0.4 at 1; svc p99 at 64 <= 3x the peer\'s');

    const second = await serveExisting(fresh.url, seeded.operatorKey);
    procs.push(second);
    await writes(second, seeded.operatorKey, seeded.clientId, 4, 1);
    const one = await writes(svc, seeded.operatorKey, seeded.clientId, 32, seconds);
    const [x, y] = await Promise.all([
      writes(svc, seeded.operatorKey, seeded.clientId, 16, seconds),
      writes(second, seeded.operatorKey, seeded.clientId, 16, seconds),
    ]);
    const both = x.rps + y.rps;
    console.log(`one svc process, 32 connections: ${one.rps.toFixed(0)} writes/s; two processes, 16 each: ${both.toFixed(0)} writes/s (${x.rps.toFixed(0)} + ${y.rps.toFixed(0)}) = ${(both / one.rps).toFixed(2)}x (target >= 1.5x)`);
  } finally {
    for (const p of procs.reverse()) await p.stop().catch(() => undefined);
    await fresh.drop().catch(() => undefined);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.log('bench-writes: set DATABASE_URL (PostgreSQL)');
    process.exit(0);
  }
  await benchWrites({ databaseUrl: url, quick: process.argv.includes('--quick') });
  process.exit(0);
}
