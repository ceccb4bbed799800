// CPU a write (issue 41; docs/writes.md): a server process's CPU (utime+stime, /proc) divided by the
// writes it completed, POST /v1/tasks on PostgreSQL. CPU a write is steadier than writes/s on a shared
// machine (time spent waiting for a core does not count), but it still grows with the machine's load
// (caches, the other core's work), so both modes compare two servers under the same load:
//   node --import tsx scripts/write-cpu.ts [connections=16] [seconds=4] [rounds=5]
//     svc and the same-work peer (scripts/peer-writes.mjs), one after the other, round by round, at
//     `connections`; prints each round, the medians and svc's CPU a write over the peer's.
//   node --import tsx scripts/write-cpu.ts [connections] [seconds] [rounds] --against <checkout>
//     this checkout's svc and another's (its bin/svc.js, built), at the same time, half the
//     connections each: the same load on both. Prints this one's CPU a write over the other's
//     (below 1: this one is cheaper), round by round and the median.
// Needs DATABASE_URL (a database of its own is made and dropped).
import { resolve } from 'node:path';
import { taskWrites } from './task-writes.ts';
import { freshPostgresDatabase } from '../test/support/db.ts';
import { seedDemo } from './bench-load.ts';
import { cpuSeconds, serveExisting, type Proc } from './bench-procs.ts';
import { startPeer } from './peer-writes-proc.ts';

const args = process.argv.slice(2);
const againstAt = args.indexOf('--against');
const against = againstAt >= 0 ? resolve(args[againstAt + 1]!, 'bin/svc.js') : null;
if (againstAt >= 0) args.splice(againstAt, 2);
const [connections = 16, seconds = 4, rounds = 5] = args.map(Number);
type Seeded = { operatorKey: string; clientId: string };

async function round(p: Proc, s: Seeded, c: number): Promise<{ ms: number; rps: number }> {
  const before = cpuSeconds(p.pid);
  const r = await taskWrites(p.url, s.operatorKey, s.clientId, c, seconds);
  const cpuMs = (cpuSeconds(p.pid) - before) * 1000;
  const writes = r['2xx'];
  return { ms: writes ? cpuMs / writes : NaN, rps: r.requests.average };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const url = process.env.DATABASE_URL;
if (!url) {
  console.log('write-cpu: set DATABASE_URL (PostgreSQL)');
  process.exit(0);
}
const fresh = await freshPostgresDatabase(url);
const procs: Proc[] = [];
try {
  const seeded = (await seedDemo({ ...process.env, DATABASE_URL: fresh.url })) as Seeded;
  const svc = await serveExisting(fresh.url, seeded.operatorKey);
  procs.push(svc);
  const other = against ? await serveExisting(fresh.url, seeded.operatorKey, {}, [], against) : await startPeer(fresh.url, true);
  procs.push(other);
  const otherName = against ? 'other' : 'peer';
  const together = (c: number) => (against ? Promise.all([round(svc, seeded, c), round(other, seeded, c)]) : round(svc, seeded, c).then(async (x) => [x, await round(other, seeded, c)] as const));
  await together(4);
  const a: number[] = [];
  const b: number[] = [];
  const ra: number[] = [];
  const rb: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const [x, y] = await together(against ? Math.max(1, Math.round(connections / 2)) : connections);
    a.push(x.ms);
    b.push(y.ms);
    ra.push(x.rps);
    rb.push(y.rps);
    ratios.push(x.ms / y.ms);
    console.log(`round ${i + 1}: svc ${x.ms.toFixed(3)} ms a write (${x.rps.toFixed(0)} writes/s), ${otherName} ${y.ms.toFixed(3)} ms (${y.rps.toFixed(0)} writes/s), ${(x.ms / y.ms).toFixed(3)}`);
  }
  console.log(
    `c=${connections}${against ? ' (half each, at once)' : ''}, median of ${rounds}: svc ${median(a).toFixed(3)} ms of CPU a write (${median(ra).toFixed(0)} writes/s), ` +
      `${otherName} ${median(b).toFixed(3)} ms (${median(rb).toFixed(0)} writes/s); svc's CPU a write over the ${otherName}'s, median of the rounds: ${median(ratios).toFixed(3)}`,
  );
} finally {
  for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  await fresh.drop().catch(() => undefined);
}
process.exit(0);
