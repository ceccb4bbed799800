// A real Prometheus for tests (the Debian package `prometheus`, which .ci/run installs): started
// with a scrape config for the given targets (one job, a short interval), its HTTP API queried,
// stopped and its data directory removed. Also `promtool check metrics`, Prometheus's own linter.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.ts';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';
export const PROMTOOL_BIN = '/usr/bin/promtool';

/** Why Prometheus tests cannot run here, or null. */
export function prometheusMissing(): string | null {
  return existsSync(PROMETHEUS_BIN) ? null : `${PROMETHEUS_BIN} is not installed (apt-get install -y prometheus; .ci/run installs it)`;
}

export interface QueryResult {
  metric: Record<string, string>;
  value: number;
}

export interface RunningPrometheus {
  url: string;
  /** An instant query through /api/v1/query. */
  query(promql: string): Promise<QueryResult[]>;
  /** Resolves once every target of the job has been scraped and is up. */
  targetsUp(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts Prometheus scraping `targets` (host:port, path /metrics) as job `job` every `intervalSeconds`. */
export async function startPrometheus(targets: string[], options: { job?: string; intervalSeconds?: number } = {}): Promise<RunningPrometheus> {
  const job = options.job ?? 'svc';
  const interval = `${options.intervalSeconds ?? 1}s`;
  const dir = mkdtempSync(join(tmpdir(), 'svc-prometheus-'));
  const port = await freePort();
  const config = `global:
  scrape_interval: ${interval}
  evaluation_interval: ${interval}
scrape_configs:
  - job_name: ${job}
    metrics_path: /metrics
    static_configs:
      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]
`;
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  child.stderr!.on('data', (d) => (errors = (errors + d).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${errors}`);
      const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`prometheus was not ready within 30 s: ${errors}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  async function query(promql: string): Promise<QueryResult[]> {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (body.status !== 'success' || body.data?.resultType !== 'vector') throw new Error(`query ${promql}: ${body.error ?? JSON.stringify(body)}`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }
  return {
    url,
    query,
    async targetsUp(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const up = await query(`up{job="${job}"} == 1`).catch(() => []);
        if (up.length === count) return;
        if (Date.now() > deadline) {
          const targets = await fetch(`${url}/api/v1/targets`).then((r) => r.text(), () => '');
          throw new Error(`${up.length} of ${count} targets up after ${timeoutMs} ms: ${targets.slice(0, 2000)}`);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    stop,
  };
}

/** `promtool check metrics` on an exposition: its complaints, one a line (none: valid and lint-clean). */
export function promtoolProblems(exposition: string): string[] | null {
  if (!existsSync(PROMTOOL_BIN)) return null;
  const run = spawnSync(PROMTOOL_BIN, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  return `${run.stdout}${run.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}
