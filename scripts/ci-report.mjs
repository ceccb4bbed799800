#!/usr/bin/env node
// What .ci/run prints after each test pass and at its end (docs/testing.md, "CI"): per pass, its test
// counts, its wall time and its ten slowest files (from scripts/vitest-timings.ts's JSON); at the end,
// each step's wall time and the total. These lines are how the next slowdown is seen: keep them.
//   node scripts/ci-report.mjs [--top N] <timings.json>...        one block per pass
//   node scripts/ci-report.mjs --steps <steps.tsv> <timings.json>...   the closing summary
//   node scripts/ci-report.mjs --durations test/durations.json <timings.json>...   refreshes the
//     table the test sequencer starts the longest files first by (test/support/sequencer.ts)
// steps.tsv: one line per step, "<name>\t<seconds>\t<exit code>".
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
let top = 10;
let steps = null;
let durations = null;
const reports = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i]);
  else if (args[i] === '--steps') steps = args[++i];
  else if (args[i] === '--durations') durations = args[++i];
  else reports.push(args[i]);
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const minutes = (s) => {
  const whole = Math.round(s); // 419.8 s is 7m00s, not 6m60s
  return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
};

function load(path) {
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, 'utf8'));
}

function label(r) {
  return `${r.pass} pass, ${r.database}, Node ${r.node}`;
}

function passBlock(r) {
  const t = r.totals;
  const sum = r.files.reduce((n, f) => n + f.durationMs + f.collectMs, 0);
  const lines = [
    `-- ${label(r)}: ${t.files} files, ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped; wall ${seconds(r.wallMs)} (files' own time ${seconds(sum)})`,
    `   ${top} slowest files (tests and hooks + import):`,
  ];
  const slow = [...r.files].sort((a, b) => b.durationMs + b.collectMs - (a.durationMs + a.collectMs)).slice(0, top);
  for (const f of slow) lines.push(`   ${seconds(f.durationMs + f.collectMs).padStart(8)}  ${f.project.padEnd(8)}  ${f.file}${f.state === 'failed' ? '  FAILED' : ''}`);
  const broken = r.files.filter((f) => f.state === 'failed');
  if (broken.length) lines.push(`   failed files: ${broken.map((f) => f.file).join(', ')}`);
  return lines;
}

const loaded = reports.map((p) => [p, load(p)]);

if (durations) {
  // Per engine, each file's seconds (tests, hooks and import); files of earlier runs are kept.
  const table = load(durations) ?? { pglite: {}, postgres: {} };
  for (const [, r] of loaded) {
    if (!r) continue;
    for (const f of r.files) table[r.database][f.file] = Math.round((f.durationMs + f.collectMs) / 100) / 10;
  }
  for (const engine of Object.keys(table)) table[engine] = Object.fromEntries(Object.entries(table[engine]).sort(([a], [b]) => (a < b ? -1 : 1)));
  writeFileSync(durations, `${JSON.stringify(table, null, 1)}\n`);
  console.log(`${durations}: ${Object.keys(table.pglite).length} PGlite and ${Object.keys(table.postgres).length} PostgreSQL files`);
  process.exit(0);
}
const out = [];
for (const [path, r] of loaded) {
  if (!r) out.push(`-- ${path}: no timings (the pass did not finish)`);
  else if (!steps) out.push(...passBlock(r));
}

if (steps) {
  const rows = existsSync(steps)
    ? readFileSync(steps, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t'))
    : [];
  const total = rows.reduce((n, [, s]) => n + Number(s), 0);
  out.push('== CI summary');
  out.push('   step times:');
  for (const [name, s, rc] of rows) out.push(`   ${minutes(Number(s)).padStart(7)}  ${name}${rc !== '0' ? `  (exit ${rc})` : ''}`);
  out.push(`   ${minutes(total).padStart(7)}  total`);
  let passed = 0;
  let failed = 0;
  out.push('   test passes:');
  for (const [path, r] of loaded) {
    if (!r) {
      // A pass that did not finish (stopped, or vitest never started) counts as a failure.
      out.push(`   ${path}: no timings (the pass did not finish)`);
      failed += 1;
      continue;
    }
    const t = r.totals;
    const broken = r.files.filter((f) => f.state === 'failed' && f.failed === 0).length;
    passed += t.passed;
    failed += t.failed + broken;
    out.push(`   ${label(r)}: ${t.files} files, ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped in ${seconds(r.wallMs)}`);
    // Which ones, so the log's last lines say what broke (a file that failed outside its tests: its name).
    for (const f of r.files.filter((x) => x.state === 'failed')) {
      const names = f.failedTests?.length ? f.failedTests : ['(the file itself: a hook or an import)'];
      for (const name of names) out.push(`     failed: ${f.file} > ${name}`);
    }
  }
  out.push(`tests: ${passed} passed, ${failed} failed`);
}
console.log(out.join('\n'));
