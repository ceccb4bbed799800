// A bounded closed-loop load on loopback, shared by the HTTP and MCP benches: `count` calls of
// `once` with `concurrency` in flight; samples are pooled into throughput and latency percentiles.
import { spawn } from 'node:child_process';

export interface Sample {
  latencies: number[];
  seconds: number;
}

export interface LoadStats {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

export async function runLoad(count: number, concurrency: number, once: () => Promise<void>): Promise<Sample> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < count) {
      next++;
      const t = performance.now();
      await once();
      latencies.push(performance.now() - t);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Pooled statistics of several samples of one side. */
export function loadStats(samples: Sample[]): LoadStats {
  const latencies = samples.flatMap((x) => x.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, x) => sum + x.seconds, 0);
  return { requests: latencies.length, seconds, rps: latencies.length / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}

/** `svc seed --json` in its own process with `env` (SVC_DATA_DIR …): the demo workspace's credentials. */
export async function seedDemo(env: NodeJS.ProcessEnv): Promise<{ operatorKey: string }> {
  const bin = new URL('../bin/svc.js', import.meta.url).pathname;
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'seed', '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`seed exited ${code}`))));
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { operatorKey: string };
}
