// The served OpenAPI document passes Redocly (redocly.yaml) and Spectral (spectral:oas, .spectral.yaml)
// with no errors, and no warnings other than the one the README explains (info-contact: the contract
// names no contact; a deployment adds its own).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { tempDir } from '../generator/helpers.ts';

const BIN = path.resolve('node_modules', '.bin');
const EXPLAINED_WARNINGS = ['info-contact'];
const tmp = tempDir('lint');
let s: TestServer;
let file: string;

beforeAll(async () => {
  s = await startTestServer();
  const res = await fetch(`${s.url}/v1/openapi.json`, { headers: { Authorization: `Bearer ${s.credentials.operatorKey}` } });
  expect(res.status).toBe(200);
  file = path.join(tmp.dir, 'openapi.json');
  writeFileSync(file, await res.text());
}, 60_000);

afterAll(async () => {
  await s?.close();
  tmp.cleanup();
});

function run(bin: string, args: string[]): { status: number; stdout: string } {
  try {
    return { status: 0, stdout: execFileSync(path.join(BIN, bin), args, { stdio: 'pipe', env: { ...process.env, NO_COLOR: '1' } }).toString() };
  } catch (err) {
    const e = err as { status: number; stdout: Buffer };
    return { status: e.status, stdout: String(e.stdout) };
  }
}

describe('the served OpenAPI document', { timeout: 120_000 }, () => {
  it('Spectral spectral:oas: 0 errors, only the explained warnings', () => {
    const { stdout } = run('spectral', ['lint', file, '--ruleset', path.resolve('.spectral.yaml'), '-f', 'json', '--fail-severity', 'error']);
    const findings = JSON.parse(stdout.slice(stdout.indexOf('['))) as { code: string; severity: number; path: string[] }[];
    expect(findings.filter((f) => f.severity === 0)).toEqual([]);
    expect(findings.filter((f) => f.severity === 1 && !EXPLAINED_WARNINGS.includes(f.code))).toEqual([]);
  });

  it('Redocly recommended (redocly.yaml): 0 errors and 0 warnings', () => {
    const { status, stdout } = run('redocly', ['lint', file, '--config', path.resolve('redocly.yaml'), '--format', 'json']);
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(status).toBe(0);
  });
});
