// Where one write's wall time goes under load, from svc's own spans (docs/writes.md): svc serve with
// tracing on, its spans sent over OTLP/HTTP (JSON) to a collector in this process, POST /v1/tasks at
// N connections; per sampled write: before the transaction (auth, validation, idempotency checks),
// the wait for a connection (svc.db.wait_ms: the pool's slot and BEGIN), each statement by operation,
// svc's own time between statements inside the transaction, and after COMMIT (the answer). Plus the
// process's CPU a write and its event-loop delay (prom-client's monitor, SVC_METRICS_PORT).
//   DATABASE_URL=postgres://… node --import tsx scripts/write-breakdown.ts [connections] [seconds]
import { createServer } from 'node:http';
import { taskWrites } from './task-writes.ts';
import postgres from 'postgres';
import { freePort } from '../test/support/process.ts';
import { freshPostgresDatabase } from '../test/support/db.ts';
import { seedDemo } from './bench-load.ts';
import { cpuSeconds, serveExisting } from './bench-procs.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string; doubleValue?: number } }[];
}

function collector() {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      try {
        const doc = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
        for (const rs of doc.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      } catch {
        // not JSON: ignored
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return { spans, server };
}

const ms = (s: OtlpSpan) => (Number(BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)) / 1e6);
const startMs = (s: OtlpSpan) => Number(BigInt(s.startTimeUnixNano) / 1000n) / 1000;
const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.doubleValue);
};

export interface Breakdown {
  /** Share of pg_stat_activity samples of svc's request connections in each state / wait event. */
  activity: [string, number][];
  writes: number;
  rps: number;
  cpuMsPerWrite: number;
  eventLoopDelayP99Ms: number | null;
  parts: [string, number][];
}

/** Mean ms of each part of a sampled write. */
function breakdown(spans: OtlpSpan[]): { writes: number; parts: [string, number][] } {
  const byTrace = new Map<string, OtlpSpan[]>();
  for (const s of spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s]);
  const sums = new Map<string, number>();
  const add = (k: string, v: number) => sums.set(k, (sums.get(k) ?? 0) + v);
  let writes = 0;
  for (const trace of byTrace.values()) {
    const server = trace.find((s) => s.name === 'POST /v1/tasks');
    const tx = trace.find((s) => s.name === 'db.transaction');
    if (!server || !tx) continue;
    writes++;
    const wait = Number(attr(tx, 'svc.db.wait_ms') ?? 0);
    const statements = trace.filter((s) => s.name === 'db.statement');
    let inStatements = 0;
    for (const st of statements) {
      const d = ms(st);
      inStatements += d;
      add(`  statement: ${attr(st, 'db.operation.name')}`, d);
    }
    add('total (server span)', ms(server));
    add('before the transaction', startMs(tx) - startMs(server));
    add('connection wait (slot + BEGIN)', wait);
    add('statements (round trips)', inStatements);
    add('svc between statements', ms(tx) - wait - inStatements);
    add('after the transaction (COMMIT, answer)', startMs(server) + ms(server) - (startMs(tx) + ms(tx)));
  }
  const order = ['total (server span)', 'before the transaction', 'connection wait (slot + BEGIN)', 'statements (round trips)', 'svc between statements', 'after the transaction (COMMIT, answer)'];
  const parts = [...sums].sort((a, b) => {
    const ia = order.indexOf(a[0]);
    const ib = order.indexOf(b[0]);
    return (ia < 0 ? 3.5 : ia) - (ib < 0 ? 3.5 : ib) || b[1] - a[1];
  });
  return { writes, parts: parts.map(([k, v]) => [k, writes ? v / writes : 0]) };
}

/** Samples svc's request connections in pg_stat_activity every 25 ms until stopped: state and wait event shares. */
function sampleActivity(databaseUrl: string) {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const counts = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const rows = await sql`select state, wait_event_type, wait_event from pg_stat_activity where application_name like 'svc:requests:%'`;
      for (const r of rows) {
        const key = `${r.state}${r.wait_event ? ` / ${r.wait_event_type}: ${r.wait_event}` : ' / on CPU'}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  return async (): Promise<[string, number][]> => {
    running = false;
    await loop;
    await sql.end({ timeout: 1 });
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    return [...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, total ? v / total : 0]);
  };
}

async function eventLoopP99(metricsUrl: string): Promise<number | null> {
  const text = await fetch(metricsUrl).then((r) => r.text(), () => '');
  const m = /^nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text);
  return m ? Number(m[1]) * 1000 : null;
}

export async function writeBreakdown(options: { databaseUrl: string; connections: number; seconds: number }): Promise<Breakdown> {
  const { spans, server } = collector();
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const metricsPort = await freePort();
  const fresh = await freshPostgresDatabase(options.databaseUrl);
  try {
    const seeded = (await seedDemo({ ...process.env, DATABASE_URL: fresh.url })) as { operatorKey: string; clientId: string };
    const svc = await serveExisting(fresh.url, seeded.operatorKey, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`,
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.2',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      SVC_METRICS_PORT: String(metricsPort),
    });
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const run = (connections: number, duration: number) => taskWrites(svc.url, seeded.operatorKey, seeded.clientId, connections, duration);
    try {
      await run(4, 1);
      await new Promise((r) => setTimeout(r, 500));
      spans.length = 0;
      await eventLoopP99(metricsUrl); // prom-client resets the delay histogram at each scrape
      const cpu = cpuSeconds(svc.pid);
      const stopSampling = sampleActivity(fresh.url);
      const result = await run(options.connections, options.seconds);
      const cpuMs = (cpuSeconds(svc.pid) - cpu) * 1000;
      const activity = await stopSampling();
      const eventLoopDelayP99Ms = await eventLoopP99(metricsUrl);
      await new Promise((r) => setTimeout(r, 1000)); // the last batch of spans
      const total = result.requests.total;
      return { ...breakdown(spans), activity, rps: result.requests.average, cpuMsPerWrite: total ? cpuMs / total : 0, eventLoopDelayP99Ms };
    } finally {
      await svc.stop();
    }
  } finally {
    server.close();
    await fresh.drop().catch(() => undefined);
  }
}

export function breakdownLines(b: Breakdown): string[] {
  return [
    `one write under load, from svc's spans (${b.writes} sampled writes; ${b.rps.toFixed(0)} writes/s, CPU ${b.cpuMsPerWrite.toFixed(2)} ms a write, event-loop delay p99 ${b.eventLoopDelayP99Ms?.toFixed(1) ?? '?'} ms; tracing on):`,
    ...b.parts.map(([k, v]) => `  ${k.padEnd(42)} ${v.toFixed(2).padStart(7)} ms`),
    `svc's request connections in pg_stat_activity (sampled every 25 ms): ${b.activity.slice(0, 6).map(([k, v]) => `${k} ${(v * 100).toFixed(0)}%`).join(', ')}`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.log('write-breakdown: set DATABASE_URL (PostgreSQL)');
    process.exit(0);
  }
  const [connections = 16, seconds = 10] = process.argv.slice(2).map(Number);
  for (const line of breakdownLines(await writeBreakdown({ databaseUrl: url, connections, seconds }))) console.log(line);
  process.exit(0);
}
