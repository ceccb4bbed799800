// A vitest reporter that writes each test file's time and test counts to the JSON file named by
// SVC_TEST_TIMINGS (vitest.config.ts adds it when that is set; .ci/run sets it for every pass, and
// scripts/ci-report.mjs prints the files). Vitest's own JSON reporter times a file from its first
// test's start to its last test's end, leaving out beforeAll/afterAll, where most of our files spend
// their time (servers, databases); this reporter uses the module's diagnostic instead: every test and
// hook (`durationMs`) and the import of the file (`collectMs`).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export interface FileTiming {
  file: string;
  project: string;
  state: string;
  durationMs: number;
  collectMs: number;
  passed: number;
  failed: number;
  skipped: number;
  /** Full names of the failed tests (the CI summary prints them). */
  failedTests: string[];
}

export interface TimingReport {
  pass: string;
  node: string;
  database: 'pglite' | 'postgres';
  startedAt: string;
  wallMs: number;
  files: FileTiming[];
  totals: { files: number; passed: number; failed: number; skipped: number };
}

function count(module: TestModule, state: 'passed' | 'failed' | 'skipped'): number {
  let n = 0;
  for (const _ of module.children.allTests(state)) n++;
  return n;
}

export default class TimingsReporter implements Reporter {
  private started = Date.now();

  onTestRunStart(): void {
    this.started = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const target = process.env.SVC_TEST_TIMINGS;
    if (!target) return;
    const files: FileTiming[] = modules.map((m) => {
      const d = m.diagnostic();
      return {
        file: relative(process.cwd(), m.moduleId),
        project: m.project.name,
        state: m.state(),
        durationMs: Math.round(d.duration),
        collectMs: Math.round(d.collectDuration),
        passed: count(m, 'passed'),
        failed: count(m, 'failed'),
        skipped: count(m, 'skipped'),
        failedTests: [...m.children.allTests('failed')].map((t) => t.fullName),
      };
    });
    const sum = (k: 'passed' | 'failed' | 'skipped') => files.reduce((n, f) => n + f[k], 0);
    const report: TimingReport = {
      pass: process.env.SVC_TEST_PASS ?? 'all',
      node: process.version,
      database: process.env.DATABASE_URL ? 'postgres' : 'pglite',
      startedAt: new Date(this.started).toISOString(),
      wallMs: Date.now() - this.started,
      files,
      totals: { files: files.length, passed: sum('passed'), failed: sum('failed'), skipped: sum('skipped') },
    };
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, `${JSON.stringify(report, null, 1)}\n`);
  }
}
