// Profiles svc serve under the write bench's load: POST /v1/tasks at N connections for S seconds on
// PostgreSQL, with `node --cpu-prof` (written to DIR when the process exits), then prints the summary
// (scripts/profile-summary.mjs). Needs DATABASE_URL.
//   node --import tsx scripts/profile-writes.ts [connections] [seconds] [dir]
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { taskWrites } from './task-writes.ts';
import { freshPostgresDatabase } from '../test/support/db.ts';
import { seedDemo } from './bench-load.ts';
import { serveExisting } from './bench-procs.ts';

const [connections = 16, seconds = 10] = process.argv.slice(2, 4).map(Number);
const dir = process.argv[4] ?? `/tmp/svc-prof-${Date.now()}`;
const fresh = await freshPostgresDatabase(process.env.DATABASE_URL!);
try {
  const seeded = (await seedDemo({ ...process.env, DATABASE_URL: fresh.url })) as { operatorKey: string; clientId: string };
  const svc = await serveExisting(fresh.url, seeded.operatorKey, {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const run = (c: number, d: number) => taskWrites(svc.url, seeded.operatorKey, seeded.clientId, c, d);
  await run(4, 1);
  const r = await run(connections, seconds);
  console.log(`${r.requests.average.toFixed(0)} writes/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}`);
  await svc.stop();
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file) spawnSync(process.execPath, [new URL('./profile-summary.mjs', import.meta.url).pathname, join(dir, file), '--last-ms', String(seconds * 1000), '--top', '40'], { stdio: 'inherit' });
} finally {
  await fresh.drop().catch(() => undefined);
}
process.exit(0);
