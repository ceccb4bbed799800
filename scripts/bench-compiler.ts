// The compiler as its users run it: whole `svc` processes (node bin/svc.js ..., from the compiler's
// build in dist/compiler/ when fresh), wall time, peak resident memory and CPU time (every thread) of
// each, median of runs, each run after a `sync` (no run pays for the previous one's writes).
//   svc --help; svc generate --check on the real contract with the cache warm (the run after a
//   generate) and with no cache (SVC_NO_CACHE=1: the full compile, as on a fresh CI checkout);
//   svc generate after a one-family edit (tasks.yaml, into a temporary out directory); svc generate
//   on the 10x and 100x synthetic contracts (820 and 8,200 operations; at 8,200 also on one thread,
//   SVC_PARALLEL_MIN_OPERATIONS set out of reach, to show what the second thread buys); and, in process, the re-emit
//   of svc generate --watch after a one-family edit (82 and 8,200 operations). --quick: 82 operations only.
// Peak memory and CPU time come from GNU time (/usr/bin/time -f): without it, wall time only.
// Run: node --import tsx scripts/bench-compiler.ts [--quick]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { synthContract } from './synth-contract.ts';
import { startWatch } from '../generator/tools/watch.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SVC = path.join(ROOT, 'bin/svc.js');
const GNU_TIME = '/usr/bin/time';

export interface CompilerRow {
  label: string;
  wallMs: number;
  /** Peak resident memory in MiB; null without GNU time. */
  peakMiB: number | null;
  /** CPU seconds (user + system, every thread) of the process; null without GNU time or in process. */
  cpuS?: number | null;
  target?: string;
}

interface Sample {
  wallMs: number;
  peakMiB: number | null;
  cpuS: number | null;
}

/** One whole `node bin/svc.js ...` process. Throws when it exits non-zero. */
function runOnce(args: string[], env: NodeJS.ProcessEnv = {}): Sample {
  const withTime = existsSync(GNU_TIME);
  const command = withTime ? GNU_TIME : process.execPath;
  const argv = withTime ? ['-f', '__peak_kb=%M __cpu=%U+%S', process.execPath, SVC, ...args] : [SVC, ...args];
  // Dirty pages of the previous run (an 8,200-operation generate writes 200 MB) are flushed first, so
  // that no run pays for the one before it.
  spawnSync('sync');
  const started = performance.now();
  const run = spawnSync(command, argv, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  const wallMs = performance.now() - started;
  if (run.status !== 0) throw new Error(`svc ${args.join(' ')} exited ${run.status}: ${run.stderr.slice(-400)}`);
  const kb = /__peak_kb=(\d+)/.exec(run.stderr ?? '');
  const cpu = /__cpu=([\d.]+)\+([\d.]+)/.exec(run.stderr ?? '');
  return { wallMs, peakMiB: kb ? Number(kb[1]) / 1024 : null, cpuS: cpu ? Number(cpu[1]) + Number(cpu[2]) : null };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function measure(label: string, runs: number, once: () => Sample, target?: string): CompilerRow {
  const samples = Array.from({ length: runs }, once);
  const peaks = samples.map((s) => s.peakMiB).filter((p): p is number => p !== null);
  const cpus = samples.map((s) => s.cpuS).filter((c): c is number => c !== null);
  return { label, wallMs: median(samples.map((s) => s.wallMs)), peakMiB: peaks.length ? median(peaks) : null, cpuS: cpus.length ? median(cpus) : null, target };
}

export async function benchCompiler(options: { quick?: boolean } = {}): Promise<CompilerRow[]> {
  const rows: CompilerRow[] = [];
  const runs = options.quick ? 3 : 5;
  rows.push(measure('svc --help', runs, () => runOnce(['--help']), '<= 100 ms'));
  runOnce(['generate', '--check']); // records the cache entry of this contract
  rows.push(measure('svc generate --check (82 ops, cache warm)', runs, () => runOnce(['generate', '--check']), '<= 500 ms, <= 150 MiB'));
  rows.push(measure('svc generate --check (82 ops, no cache)', options.quick ? 1 : 3, () => runOnce(['generate', '--check'], { SVC_NO_CACHE: '1' })));

  // One family edited between runs (a description toggled), generated into a temporary directory.
  const work = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-compiler-'));
  try {
    const contract = synthContract(1, path.join(ROOT, 'contract'), path.join(work, 'contract'));
    const out = path.join(work, 'out');
    runOnce(['generate', '--contract', contract, '--out', out]);
    const family = path.join(contract, 'families', 'tasks.yaml');
    const original = readFileSync(family, 'utf8');
    let flip = false;
    rows.push(
      measure('svc generate after a one-family edit (82 ops)', runs, () => {
        flip = !flip;
        writeFileSync(family, flip ? original.replace('Work items', 'Work items (edited)') : original);
        return runOnce(['generate', '--contract', contract, '--out', out]);
      }),
    );
    rows.push(await watchReemit(contract, path.join(work, 'watch-out'), 'tasks.yaml', runs, '<= 200 ms'));
    if (!options.quick) {
      for (const factor of [10, 100]) {
        const big = synthContract(factor, path.join(ROOT, 'contract'), path.join(work, `${factor}x`, 'contract'));
        // Each run writes into a directory never used before, and none is deleted until the bench ends:
        // on our VMs the disk is mounted with online discard, and the 6,900 files of the previous run,
        // deleted just before, made this run's file creation wait on the discards (0.4 ms a file
        // instead of 0.04: 2-3 s of a 13 s run), which is the machine's work, not the compiler's.
        let outs = 0;
        const freshOut = () => path.join(work, `out-${factor}x-${++outs}`);
        const row = measure(`svc generate (${82 * factor} ops, no cache)`, factor >= 100 ? 1 : 3, () => {
          return runOnce(['generate', '--contract', big, '--out', freshOut()], { SVC_NO_CACHE: '1' });
        }, factor >= 100 ? '<= 10 s' : undefined);
        rows.push(row);
        if (factor >= 100) {
          // The same on one thread (parallel/index.ts's worker never started): what the second thread buys.
          rows.push(
            measure(`svc generate (${82 * factor} ops, no cache, one thread)`, 1, () => {
              return runOnce(['generate', '--contract', big, '--out', freshOut()], { SVC_NO_CACHE: '1', SVC_PARALLEL_MIN_OPERATIONS: String(Number.MAX_SAFE_INTEGER) });
            }),
          );
          rows.push(await watchReemit(big, path.join(work, 'watch-out-100x'), 'tasks.yaml', 3, '<= 1 s'));
        }
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/**
 * svc generate --watch on `contract`: after its first generation, one family file edited `runs` times
 * (a description toggled); the median of the re-emit times the watcher reports (compile and write,
 * in process: what an author waits for after saving). Peak memory is not measured (in process).
 */
async function watchReemit(contract: string, out: string, familyFile: string, runs: number, target: string): Promise<CompilerRow> {
  const family = path.join(contract, 'families', familyFile);
  const original = readFileSync(family, 'utf8');
  const quiet = { out: () => {}, err: (l: string) => console.error(l) };
  const watcher = startWatch({ contract, out, debounceMs: 20, io: quiet });
  const times: number[] = [];
  try {
    if (!(await watcher.ready).ok) throw new Error('watch: the first generation failed');
    for (let i = 0; i < runs; i++) {
      const next = watcher.nextRun();
      writeFileSync(family, i % 2 === 0 ? original.replace('Work items', `Work items (edit ${i})`) : original);
      const run = await next;
      if (!run.ok || run.ms === undefined) throw new Error('watch: a re-emit failed');
      times.push(run.ms);
    }
  } finally {
    watcher.close();
    writeFileSync(family, original);
  }
  const label = `svc generate --watch, one-family re-emit (${contract.includes(`${path.sep}100x${path.sep}`) ? 8200 : 82} ops)`;
  return { label, wallMs: median(times), peakMiB: null, target };
}

export function formatCompilerRows(rows: CompilerRow[]): string[] {
  const lines = [`${'command'.padEnd(56)}  wall ms   peak MiB  cpu s  ms/op  target`];
  for (const r of rows) {
    const ops = /\((\d+) ops/.exec(r.label);
    const perOp = ops && !r.label.includes('--check') && !r.label.includes('edit') && !r.label.includes('re-emit') ? (r.wallMs / Number(ops[1])).toFixed(2) : '';
    lines.push(
      `${r.label.padEnd(56)}  ${r.wallMs.toFixed(0).padStart(7)}  ${(r.peakMiB === null ? '-' : r.peakMiB.toFixed(0)).padStart(9)}  ${(r.cpuS == null ? '-' : r.cpuS.toFixed(2)).padStart(5)}  ${perOp.padStart(5)}  ${r.target ?? ''}`,
    );
  }
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const line of formatCompilerRows(await benchCompiler({ quick: process.argv.includes('--quick') }))) console.log(line);
}
