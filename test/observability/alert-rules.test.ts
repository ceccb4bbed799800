// The Prometheus alert rules svc ships (docs/observability/alert-rules.yml): valid for Prometheus
// (`promtool check rules`), firing and resolving as their cases say (`promtool test rules`,
// alert-rules.promtool.yml), and querying only metrics svc exports. Debian's promtool (the prometheus
// package, which .ci/run installs); the promtool parts are skipped without it.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { processMetrics } from '../../runtime/observability/metrics.ts';
import { service } from '../../generated/registry.ts';
import { PROMTOOL_BIN } from '../support/prometheus.ts';

const RULES = fileURLToPath(new URL('../../docs/observability/alert-rules.yml', import.meta.url));
const CASES = fileURLToPath(new URL('./alert-rules.promtool.yml', import.meta.url));
const missing = existsSync(PROMTOOL_BIN) ? null : `${PROMTOOL_BIN} is not installed (apt-get install -y prometheus; .ci/run installs it)`;
if (missing) console.warn(`test/observability/alert-rules.test.ts: promtool cases skipped: ${missing}`);

function promtool(...args: string[]): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL_BIN, args, { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('the alert rules', () => {
  const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap((g) => g.rules);

  it('query only metrics svc exports', async () => {
    const known = new Set((await processMetrics(service).registry.getMetricsAsJSON()).map((m) => m.name));
    expect(rules.map((r) => r.alert)).toEqual(['SvcEventsFeedHeld', 'SvcEventsHorizonHolderOld']);
    for (const { expr } of rules) {
      const names = [...expr.matchAll(/\b(svc_[a-z0-9_]+)/g)].map((m) => m[1]!);
      expect(names.length, expr).toBeGreaterThan(0);
      for (const name of names) expect(known.has(name), `${expr}: ${name}`).toBe(true);
    }
  });

  it.skipIf(missing !== null)('pass promtool check rules', () => {
    const r = promtool('check', 'rules', RULES);
    expect(r.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.status, r.output).toBe(0);
  });

  it.skipIf(missing !== null)('fire and resolve as their promtool cases say', () => {
    const r = promtool('test', 'rules', CASES);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('SUCCESS');
  });
});
