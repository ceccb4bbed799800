// docs/observability.md documents every svc metric, label and variable the code has, and the Grafana
// dashboard (docs/observability/grafana-dashboard.json) uses only metrics the registry defines, with
// the variables its queries name. (test/fleet/prometheus.test.ts runs each of its queries on a real
// Prometheus.)
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { processMetrics } from '../../runtime/observability/metrics.ts';
import { service } from '../../generated/registry.ts';

const doc = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');
const dashboard = JSON.parse(readFileSync(new URL('../../docs/observability/grafana-dashboard.json', import.meta.url), 'utf8')) as {
  templating: { list: { name: string }[] };
  panels: { type: string; title: string; targets?: { expr: string }[] }[];
};
const registry = processMetrics(service).registry;

describe('docs/observability.md', () => {
  it('names every svc metric and each of its labels', async () => {
    const metrics = await registry.getMetricsAsJSON();
    const ours = metrics.filter((m) => m.name.startsWith('svc_'));
    expect(ours.length).toBeGreaterThan(15);
    for (const m of ours) {
      expect(doc, m.name).toContain(`\`${m.name}`);
      for (const v of m.values) for (const label of Object.keys(v.labels)) if (label !== 'le') expect(doc, `${m.name} label ${label}`).toContain(`\`${label}\``);
    }
  });

  it('names every variable runtime/observability/config.ts reads', () => {
    const source = readFileSync(new URL('../../runtime/observability/config.ts', import.meta.url), 'utf8');
    const variables = new Set([...source.matchAll(/env\.([A-Z0-9_]+)/g)].map((m) => m[1]!));
    expect(variables.size).toBeGreaterThan(5);
    for (const v of variables) expect(doc, v).toContain(v);
  });

  it('holds the HAProxy check the health test runs', () => {
    expect(doc).toContain('option httpchk GET /v1/health');
    expect(doc).toContain('http-check expect status 200');
    const test = readFileSync(new URL('./health.test.ts', import.meta.url), 'utf8');
    expect(test).toContain('option httpchk GET /v1/health');
  });
});

describe('the Grafana dashboard', () => {
  it('queries only metrics svc exports, with the variables it defines', async () => {
    const known = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
    const variables = new Set(dashboard.templating.list.map((v) => v.name));
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).toBeGreaterThan(20);
    for (const expr of exprs) {
      for (const [, name] of expr.matchAll(/\b((?:svc|nodejs|process)_[a-z0-9_]+)/g)) {
        const base = name!.replace(/_(bucket|sum|count)$/, '');
        expect(known.has(name!) || known.has(base), `${expr}: ${name}`).toBe(true);
      }
      for (const [, v] of expr.matchAll(/\$([a-z_]+)/g)) if (v !== '__rate_interval') expect(variables.has(v!), `${expr}: $${v}`).toBe(true);
    }
    // The starting set: request rate, errors, p50/p99 by operation, outbox lag, webhook backlog;
    // issue 39's feed lag, unpublished events and the age of what holds the horizon.
    const all = exprs.join('\n');
    for (const needed of ['rate(svc_requests_total', 'status_class="5xx"', 'histogram_quantile(0.5', 'histogram_quantile(0.99', 'svc_events_outbox_lag_seconds', 'svc_webhook_deliveries', 'svc_events_feed_lag_seconds', 'svc_events_horizon_holder_age_seconds', 'svc_events_feed_unpublished']) {
      expect(all, needed).toContain(needed);
    }
  });
});
