// A fleet scraped by a real Prometheus (docs/observability.md, "Several processes"): three
// `svc serve` processes on one PostgreSQL database, each with its own metrics listener
// (SVC_METRICS_PORT), one scrape job listing the three; requests are sent to each process, and
// Prometheus's HTTP API must return exactly the count sent, per process (the instance label) and in
// total. Every query of the Grafana dashboard (docs/observability/grafana-dashboard.json) runs on it,
// over metrics every process exports. promtool, Prometheus's own linter, finds nothing to say about
// any svc_* metric.
// Needs PostgreSQL (DATABASE_URL: processes cannot share PGlite) and the Debian `prometheus`
// package (.ci/run installs it); skipped with a message otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freshPostgresDatabase } from '../support/db.ts';
import { freePort, runSvc, serveSvc, stopped } from '../support/process.ts';
import { prometheusMissing, promtoolProblems, startPrometheus, type RunningPrometheus } from '../support/prometheus.ts';

const databaseUrl = process.env.DATABASE_URL;
const missing = !databaseUrl ? 'needs PostgreSQL (DATABASE_URL): several processes share one database' : prometheusMissing();
if (missing) console.warn(`test/fleet/prometheus.test.ts skipped: ${missing}`);

interface Proc {
  child: ChildProcess;
  url: string;
  metrics: string;
}

const PROCESSES = 3;
const SENT = [7, 5, 3]; // GET /v1/meta to each process

describe.skipIf(missing !== null)('Prometheus scrapes every process of a fleet', () => {
  let db: { url: string; drop(): Promise<void> };
  let operatorKey: string;
  const procs: Proc[] = [];
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    db = await freshPostgresDatabase(databaseUrl!);
    operatorKey = (JSON.parse((await runSvc(['seed', '--json'], { DATABASE_URL: db.url })).trim().split('\n').at(-1)!) as { operatorKey: string }).operatorKey;
    for (let i = 0; i < PROCESSES; i++) {
      const port = await freePort();
      const metricsPort = await freePort();
      const child = await serveSvc({ DATABASE_URL: db.url, SVC_METRICS_PORT: String(metricsPort), SVC_RATE_LIMIT_PER_MINUTE: '100000' }, port);
      procs.push({ child, url: `http://127.0.0.1:${port}`, metrics: `127.0.0.1:${metricsPort}` });
    }
    prometheus = await startPrometheus(procs.map((p) => p.metrics), { intervalSeconds: 1 });
    await prometheus.targetsUp(PROCESSES);
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    for (const p of procs) await stopped(p.child, 'SIGTERM');
    await db?.drop();
  });

  it('the request counts Prometheus returns are the ones sent, per process and in total', async () => {
    const auth = { authorization: `Bearer ${operatorKey}` };
    for (let i = 0; i < PROCESSES; i++) {
      for (let n = 0; n < SENT[i]!; n++) expect((await fetch(`${procs[i]!.url}/v1/meta`, { headers: auth })).status).toBe(200);
    }
    // One MCP call to the first process, one refused REST call to the second.
    const mcp = await fetch(`${procs[0]!.url}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } }),
    });
    expect(mcp.status).toBe(200);
    expect((await fetch(`${procs[1]!.url}/v1/meta`)).status).toBe(401);

    const total = SENT.reduce((a, b) => a + b, 0);
    const ranRest = 'svc_requests_total{job="svc",operation="meta.get",transport="rest",outcome="ran"}';
    const deadline = Date.now() + 30_000;
    let got = -1;
    while (Date.now() < deadline) {
      got = (await prometheus.query(`sum(${ranRest})`))[0]?.value ?? -1;
      if (got >= total) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(got).toBe(total);
    const perInstance = Object.fromEntries((await prometheus.query(`sum by (instance) (${ranRest})`)).map((r) => [r.metric.instance, r.value]));
    expect(perInstance).toEqual(Object.fromEntries(procs.map((p, i) => [p.metrics, SENT[i]])));
    // The other series of the mix, scraped as well.
    for (let i = 0; i < 40; i++) {
      const [mcpRan] = await prometheus.query('sum(svc_requests_total{operation="meta.get",transport="mcp",outcome="ran"})');
      const [refused] = await prometheus.query('sum(svc_requests_total{operation="meta.get",transport="rest",outcome="refused"})');
      if (mcpRan?.value === 1 && refused?.value === 1) break;
      if (i === 39) throw new Error(`mcp ${mcpRan?.value}, refused ${refused?.value}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect((await prometheus.query('sum by (instance) (svc_requests_total{transport="mcp"})')).map((r) => r.metric.instance)).toEqual([procs[0]!.metrics]);
  });

  it('every process reports itself and the same database-wide gauges', async () => {
    expect((await prometheus.query('count(svc_build_info{job="svc"})'))[0]?.value).toBe(PROCESSES);
    expect((await prometheus.query('count(nodejs_eventloop_lag_seconds{job="svc"})'))[0]?.value).toBe(PROCESSES);
    const pending = await prometheus.query('svc_approvals_pending{job="svc",tier="2"}');
    expect(pending).toHaveLength(PROCESSES);
    expect(new Set(pending.map((r) => r.value)).size).toBe(1);
  });

  it('every query of the Grafana dashboard runs on Prometheus, over metrics every process exports', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../docs/observability/grafana-dashboard.json', import.meta.url), 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })));
    expect(exprs.length).toBeGreaterThan(20);
    const names = new Set<string>();
    for (const { title, expr } of exprs) {
      const promql = expr.replaceAll('$__rate_interval', '1m').replaceAll('$instance', '.*').replaceAll('$operation', '.*').replaceAll('$job', 'svc');
      await expect(prometheus.query(promql), `${title}: ${promql}`).resolves.toBeInstanceOf(Array);
      for (const m of promql.matchAll(/\b((?:svc|nodejs|process)_[a-z0-9_]+|up)(?=[{[ )])/g)) names.add(m[1]!);
    }
    for (const name of names) {
      const [count] = await prometheus.query(`count by (instance) ({__name__="${name}",job="svc"})`).then((r) => [r.length]);
      expect(count, `${name} is exported by every process`).toBe(PROCESSES);
    }
  });

  it("promtool finds nothing to say about svc's own metrics", async (ctx) => {
    for (const p of procs) {
      const problems = promtoolProblems(await (await fetch(`http://${p.metrics}/metrics`)).text());
      if (problems === null) return ctx.skip();
      expect(problems.filter((line) => line.includes('svc_'))).toEqual([]);
    }
  });
});
