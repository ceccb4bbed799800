// Times `svc generate` and `svc generate --check` in-process (after a warm-up, median of a few runs)
// on the real contract and on 10x and 100x synthetic ones; ms per operation shows linear growth.
// Run: node --import tsx scripts/bench-generate.ts [factors...]   (default: 1 10 100)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { checkGenerated, compileContract, writeGenerated } from '../generator/generate.ts';
import { synthContract } from './synth-contract.ts';

export interface BenchRow {
  factor: number;
  operations: number;
  generateMs: number;
  checkMs: number;
  generateMsPerOp: number;
  checkMsPerOp: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function time(fn: () => Promise<unknown>, runs: number): Promise<number> {
  await fn(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

export async function benchGenerate(factors = [1, 10, 100], runs?: (factor: number) => number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const factor of factors) {
    const contract = factor === 1 ? 'contract' : synthContract(factor);
    const out = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-out-'));
    try {
      const n = runs?.(factor) ?? (factor >= 100 ? 1 : factor >= 10 ? 3 : 5);
      let operations = 0;
      const generateMs = await time(async () => {
        const files = await compileContract(contract);
        writeGenerated(files, out);
        operations = countOps(files);
      }, n);
      const checkMs = await time(async () => {
        const report = checkGenerated(await compileContract(contract), out);
        if (!report.ok) throw new Error('bench: --check found differences right after generate');
      }, n);
      rows.push({ factor, operations, generateMs, checkMs, generateMsPerOp: generateMs / operations, checkMsPerOp: checkMs / operations });
    } finally {
      rmSync(out, { recursive: true, force: true });
      if (factor !== 1) rmSync(path.dirname(contract), { recursive: true, force: true });
    }
  }
  return rows;
}

function countOps(files: Map<string, string>): number {
  return (files.get('routes.ts')!.match(/^ {2}\{ id: /gm) ?? []).length;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const factors = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const rows = await benchGenerate(factors.length ? factors : [1, 10, 100]);
  console.log('factor  operations  generate ms  ms/op   check ms  ms/op');
  for (const r of rows)
    console.log(
      `${String(r.factor).padStart(6)}  ${String(r.operations).padStart(10)}  ${r.generateMs.toFixed(0).padStart(11)}  ${r.generateMsPerOp.toFixed(2).padStart(5)}  ${r.checkMs.toFixed(0).padStart(9)}  ${r.checkMsPerOp.toFixed(2).padStart(5)}`,
    );
}
