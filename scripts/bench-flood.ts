// A failed-authentication flood against `svc serve` in its own process (PGlite in a temporary data
// directory): a valid caller's latency (GET /v1/meta, one at a time from 127.0.0.1) measured quiet,
// then while 32 connections from 127.0.0.2 send random well-formed API keys at 1,000 requests a
// second in all (the rate of the probe that found the defect: reliability-probes.md).
// Target (issue 17): the valid caller's p99 under the flood stays within 2x of its quiet p99.
// The flooders' answers are counted (401 until limits.failedAuthPerMinute is spent, 429 after).
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadStats, runLoad, seedDemo } from './bench-load.ts';

const BIN = new URL('../bin/svc.js', import.meta.url).pathname;

function get(port: number, credential: string, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/meta', localAddress, headers: { authorization: `Bearer ${credential}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function benchFlood(options: { print: boolean; port?: number }): Promise<{ quietP99: number; floodP99: number; ratio: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-flood-'));
  const port = options.port ?? 18_000 + Math.floor(Math.random() * 1000);
  const env = { ...process.env, SVC_DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(port), SVC_RATE_LIMIT_PER_MINUTE: '10000000' };
  const { operatorKey } = await seedDemo(env);
  const server = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], { env, stdio: 'ignore' });
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await get(port, operatorKey, '127.0.0.1')) === 200) break;
      } catch {
        if (i > 300) throw new Error('svc serve did not start');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const valid = () =>
      get(port, operatorKey, '127.0.0.1').then((status) => {
        if (status !== 200) throw new Error(`valid caller got ${status}`);
      });
    await runLoad(300, 1, valid); // warm-up
    const quiet = loadStats([await runLoad(1000, 1, valid)]);

    let flooding = true;
    const answers = new Map<number, number>();
    const perWorkerGapMs = 32; // 32 workers x one request every 32 ms = 1,000 requests a second
    const flooder = async () => {
      while (flooding) {
        const started = performance.now();
        const status = await get(port, `svc_sk_live_${randomBytes(32).toString('base64url')}`, '127.0.0.2').catch(() => 0);
        answers.set(status, (answers.get(status) ?? 0) + 1);
        const rest = perWorkerGapMs - (performance.now() - started);
        if (rest > 0) await new Promise((r) => setTimeout(r, rest));
      }
    };
    const flood = Array.from({ length: 32 }, flooder);
    await new Promise((r) => setTimeout(r, 500));
    const loaded = loadStats([await runLoad(1000, 1, valid)]);
    flooding = false;
    await Promise.all(flood);

    const ratio = loaded.p99Ms / quiet.p99Ms;
    if (options.print) {
      console.log(`valid caller quiet:       p50 ${quiet.p50Ms.toFixed(2)} ms  p99 ${quiet.p99Ms.toFixed(2)} ms`);
      console.log(`valid caller under flood: p50 ${loaded.p50Ms.toFixed(2)} ms  p99 ${loaded.p99Ms.toFixed(2)} ms`);
      console.log(`flood answers: ${[...answers].sort().map(([s, n]) => `${s}: ${n}`).join(', ')}`);
      console.log(`p99 ratio flood/quiet: ${ratio.toFixed(2)} (target <= 2)`);
    }
    return { quietP99: quiet.p99Ms, floodP99: loaded.p99Ms, ratio };
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
