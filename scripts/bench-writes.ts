// The write line of `npm run bench` (issues 24, 41; docs/writes.md): POST /v1/tasks with a fresh
// Idempotency-Key each, on PostgreSQL, against a hand-written same-work peer (scripts/peer-writes.mjs)
// with the same driver settings, each in its own process, driven by the same autocannon at 1, 4, 16
// and 64 connections on a direct connection, and at 1 and 16 through PgBouncer in transaction mode;
// writes/s, p50/p99, the ratios; round trips per write counted on the wire in both modes
// (scripts/count-round-trips.ts); two svc processes against one; where one write's time goes
// (scripts/write-breakdown.ts). Printed, never asserted. Needs DATABASE_URL (a database of its own is
// made and dropped); the pooled lines need Debian's pgbouncer.
//   node --import tsx scripts/bench-writes.ts [--quick]
import { taskWrites } from './task-writes.ts';
import { freshPostgresDatabase } from '../test/support/db.ts';
import { startPgBouncer } from '../test/support/fleet.ts';
import { seedDemo } from './bench-load.ts';
import { cpuSeconds, serveExisting, type Proc } from './bench-procs.ts';
import { startPeer } from './peer-writes-proc.ts';
import { countRoundTrips, roundTripsLine } from './count-round-trips.ts';
import { breakdownLines, writeBreakdown } from './write-breakdown.ts';

interface WriteResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  bad: number;
  serverCpu: number;
}

/** POST /v1/tasks as fast as `connections` allow, each request with a new Idempotency-Key. */
async function writes(target: Proc, key: string, clientId: string, connections: number, seconds: number): Promise<WriteResult> {
  const cpuBefore = cpuSeconds(target.pid);
  const started = performance.now();
  const result = await taskWrites(target.url, key, clientId, connections, seconds);
  return {
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    bad: result.non2xx + result.errors + result.timeouts,
    serverCpu: (cpuSeconds(target.pid) - cpuBefore) / ((performance.now() - started) / 1000),
  };
}

const fmt = (r: WriteResult) =>
  `${r.rps.toFixed(0).padStart(6)} (${r.p50Ms.toFixed(0)} / ${r.p99Ms.toFixed(0)} ms, CPU ${(r.serverCpu * 100).toFixed(0)}%, ${((r.serverCpu * 1000) / r.rps).toFixed(2)} ms a write)${r.bad ? ` [${r.bad} failed]` : ''}`;

type Seeded = { operatorKey: string; clientId: string };

/** svc and the peer on one database URL, side by side at each level; returns the rows by level. */
async function sideBySide(url: string, seeded: Seeded, prepare: boolean, levels: number[], seconds: number): Promise<Map<number, [WriteResult, WriteResult]>> {
  const procs: Proc[] = [];
  const rows = new Map<number, [WriteResult, WriteResult]>();
  try {
    const svc = await serveExisting(url, seeded.operatorKey);
    procs.push(svc);
    const peer = await startPeer(url, prepare);
    procs.push(peer);
    // Warm both (key cache, prepared statements, JIT).
    await writes(svc, seeded.operatorKey, seeded.clientId, 4, 1);
    await writes(peer, seeded.operatorKey, seeded.clientId, 4, 1);
    console.log('connections  svc writes/s (p50 / p99, CPU)                   peer writes/s (p50 / p99, CPU)                  ratio  p99 ratio');
    for (const c of levels) {
      const a = await writes(svc, seeded.operatorKey, seeded.clientId, c, seconds);
      const b = await writes(peer, seeded.operatorKey, seeded.clientId, c, seconds);
      rows.set(c, [a, b]);
      console.log(`${String(c).padStart(11)}  ${fmt(a).padEnd(46)}  ${fmt(b).padEnd(46)}  ${(a.rps / b.rps).toFixed(2).padStart(5)}  ${(a.p99Ms / b.p99Ms).toFixed(1).padStart(8)}x`);
    }
  } finally {
    for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  }
  return rows;
}

/** One svc process at 32 connections against two at 16 each, on one database. */
async function twoProcesses(url: string, seeded: Seeded, seconds: number): Promise<void> {
  const procs: Proc[] = [];
  try {
    const first = await serveExisting(url, seeded.operatorKey);
    procs.push(first);
    const second = await serveExisting(url, seeded.operatorKey);
    procs.push(second);
    await writes(first, seeded.operatorKey, seeded.clientId, 4, 1);
    await writes(second, seeded.operatorKey, seeded.clientId, 4, 1);
    const one = await writes(first, seeded.operatorKey, seeded.clientId, 32, seconds);
    const [x, y] = await Promise.all([writes(first, seeded.operatorKey, seeded.clientId, 16, seconds), writes(second, seeded.operatorKey, seeded.clientId, 16, seconds)]);
    const both = x.rps + y.rps;
    console.log(`one svc process, 32 connections: ${one.rps.toFixed(0)} writes/s; two processes, 16 each: ${both.toFixed(0)} writes/s (${x.rps.toFixed(0)} + ${y.rps.toFixed(0)}) = ${(both / one.rps).toFixed(2)}x (target >= 1.3x)`);
  } finally {
    for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  }
}

function targets(rows: Map<number, [WriteResult, WriteResult]>, pooled: Map<number, [WriteResult, WriteResult]>): string {
  const ratio = (m: Map<number, [WriteResult, WriteResult]>, c: number) => (m.get(c) ? m.get(c)![0].rps / m.get(c)![1].rps : Number.NaN);
  const growth = (i: 0 | 1) => rows.get(16)![i].rps / rows.get(1)![i].rps;
  const p99 = rows.get(64) ? rows.get(64)![0].p99Ms / rows.get(64)![1].p99Ms : Number.NaN;
  const f = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(2));
  return (
    `targets: direct c=16 ${f(ratio(rows, 16))} (>= 0.6), c=1 ${f(ratio(rows, 1))} (>= 0.5), growth c=1->16 svc ${f(growth(0))}x vs peer ${f(growth(1))}x = ${f(growth(0) / growth(1))} (>= 0.8); ` +
    `PgBouncer c=16 ${f(ratio(pooled, 16))} (>= 0.5); p99 at c=64 ${f(p99)}x the peer's (<= 3)`
  );
}

export async function benchWrites(options: { databaseUrl: string; quick: boolean }): Promise<void> {
  const seconds = options.quick ? 3 : 10;
  const levels = options.quick ? [1, 16] : [1, 4, 16, 64];
  const fresh = await freshPostgresDatabase(options.databaseUrl);
  const bouncer = await startPgBouncer(new URL(options.databaseUrl)).catch((err: Error) => {
    console.log(`PgBouncer not started (${err.message.split('\n')[0]}): the pooled lines are skipped`);
    return null;
  });
  try {
    const seeded = (await seedDemo({ ...process.env, DATABASE_URL: fresh.url })) as Seeded;
    const pooledUrl = bouncer?.url(new URL(fresh.url).pathname.slice(1)) ?? null;
    console.log(roundTripsLine('direct: named statements, both', await countRoundTrips({ databaseUrl: fresh.url, ...seeded, pooled: false })));
    if (pooledUrl) console.log(roundTripsLine('PgBouncer 1.18, transaction mode: unnamed statements, both', await countRoundTrips({ databaseUrl: pooledUrl, ...seeded, pooled: true })));
    console.log('direct connection (svc: a session connection, named prepared statements; the peer: the same)');
    const rows = await sideBySide(fresh.url, seeded, true, levels, seconds);
    let pooled = new Map<number, [WriteResult, WriteResult]>();
    if (pooledUrl) {
      console.log('behind PgBouncer in transaction mode (svc: unnamed statements, SET LOCAL bounds; the peer: unnamed statements)');
      pooled = await sideBySide(pooledUrl, seeded, false, options.quick ? [16] : [1, 16], seconds);
    }
    console.log(targets(rows, pooled));
    await twoProcesses(fresh.url, seeded, seconds);
    for (const line of breakdownLines(await writeBreakdown({ databaseUrl: options.databaseUrl, connections: 16, seconds: options.quick ? 4 : 8 }))) console.log(line);
  } finally {
    await bouncer?.stop().catch(() => undefined);
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
