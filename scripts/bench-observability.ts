// What metrics and tracing cost (issue 29), each server in its own process on PGlite, driven by
// autocannon on GET /v1/meta, measured side by side in one run:
//   - off (the default): neither prom-client nor OpenTelemetry is loaded; the hooks are empty functions;
//   - metrics on (SVC_METRICS_PORT): counters and a histogram per request;
//   - tracing on (OTEL_EXPORTER_OTLP_ENDPOINT, to a sink in this process that drains what the OTLP
//     exporter posts): a server span and the validation and handler spans per request.
// The three runs alternate, twice, and each side's best run counts. Then start-up, spawn to the first
// 200, with each setting, alternated run by run on one seeded data directory (median).
// `off` against main (before issue 29) shows whether the switched-off hooks cost anything: that
// ratio is the pipeline / bare Hono line of the HTTP section, compared with earlier runs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cannon, line, spawnServe, startSvc, type CannonResult, type SvcProc } from './bench-procs.ts';
import { freePort } from '../test/support/process.ts';

export interface ObservabilityBenchOptions {
  quick: boolean;
  print: boolean;
}

const BIN = new URL('../bin/svc.js', import.meta.url).pathname;

/** An OTLP/HTTP endpoint that accepts and drops every export (counting the bytes). */
async function otlpSink(): Promise<{ url: string; bytes: () => number; close(): Promise<void> }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (d: Buffer) => (bytes += d.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function benchObservability(options: ObservabilityBenchOptions): Promise<Record<string, number>> {
  const say = (s: string) => options.print && console.log(s);
  const seconds = options.quick ? 3 : 8;
  const out: Record<string, number> = {};
  const sink = await otlpSink();
  const variants: { label: string; env: Record<string, string> }[] = [
    { label: 'off', env: {} },
    { label: 'metrics on', env: { SVC_METRICS_PORT: String(await freePort()) } },
    { label: 'tracing on', env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } },
  ];
  const procs: SvcProc[] = [];
  try {
    for (const v of variants) procs.push(await startSvc({ env: v.env }));
    const runs: CannonResult[][] = variants.map(() => []);
    for (let i = 0; i < variants.length; i++) {
      const auth = { authorization: `Bearer ${procs[i]!.operatorKey}` };
      await cannon({ url: `${procs[i]!.url}/v1/meta`, connections: 16, seconds: 2, headers: auth }); // warm-up
    }
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < variants.length; i++) {
        const auth = { authorization: `Bearer ${procs[i]!.operatorKey}` };
        runs[i]!.push(await cannon({ url: `${procs[i]!.url}/v1/meta`, connections: 16, seconds, headers: auth, serverPid: procs[i]!.pid }));
      }
    }
    const best = runs.map((rs) => rs.reduce((a, b) => (b.rps > a.rps ? b : a)));
    variants.forEach((v, i) => say(line(`GET /v1/meta, ${v.label}, 16 conns`, best[i]!)));
    out.metricsOnOverOff = best[1]!.rps / best[0]!.rps;
    out.tracingOnOverOff = best[2]!.rps / best[0]!.rps;
    say(`metrics on / off: ${out.metricsOnOverOff.toFixed(2)}; tracing on / off: ${out.tracingOnOverOff.toFixed(2)} (req/s, best of 2 alternated runs each; OTLP sink got ${(sink.bytes() / 1e6).toFixed(1)} MB)`);
  } finally {
    for (const p of procs) await p.stop();
  }

  // Start-up with each setting, alternated run by run on one seeded PGlite directory.
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-obs-'));
  try {
    const env = { ...process.env, SVC_DATA_DIR: dataDir, DATABASE_URL: '', NODE_ENV: 'production' };
    const seeded = spawnSync(process.execPath, [BIN, 'seed', '--json'], { env, encoding: 'utf8' });
    if (seeded.status !== 0) throw new Error(`svc seed failed: ${seeded.stderr}`);
    const { operatorKey } = JSON.parse(seeded.stdout.trim().split('\n').at(-1)!) as { operatorKey: string };
    const times: number[][] = variants.map(() => []);
    for (let run = 0; run < (options.quick ? 3 : 7); run++) {
      for (let i = 0; i < variants.length; i++) {
        const port = await freePort();
        const proc = await spawnServe({ ...env, PORT: String(port), ...variants[i]!.env }, port, operatorKey);
        times[i]!.push(proc.startupMs);
        await proc.stop();
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    variants.forEach((v, i) => {
      out[`startup ${v.label}`] = median(times[i]!);
      say(`start-up (PGlite, dist/ build), ${v.label.padEnd(10)}: median ${median(times[i]!).toFixed(0).padStart(5)} ms  (${times[i]!.map((t) => t.toFixed(0)).join(', ')})`);
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await sink.close();
  }
  return out;
}

// Alone: node --import tsx scripts/bench-observability.ts [--quick]
if (import.meta.url === `file://${process.argv[1]}`) {
  await benchObservability({ quick: process.argv.includes('--quick'), print: true });
  process.exit(0);
}
