// Shared helpers of the governance tests: copy the fixture contract, mutate its YAML text, compile.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { displayPath } from '../../generator/load.ts';
import { compileContract, type CompiledContract } from '../../generator/snapshot.ts';

export const FIXTURE = 'test/fixtures/governance/contract';

const made: string[] = [];

/** A temporary copy of a contract directory. */
export function copyContract(from = FIXTURE): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-gov-'));
  cpSync(from, dir, { recursive: true });
  made.push(dir);
  return dir;
}

export function cleanupCopies(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export type Edits = Record<string, [from: string | RegExp, to: string][]>;

/** Applies text replacements (each must match) to files of a contract directory. */
export function applyEdits(dir: string, edits: Edits): void {
  for (const [rel, list] of Object.entries(edits)) {
    const file = path.join(dir, rel);
    let text = readFileSync(file, 'utf8');
    for (const [from, to] of list) {
      const next = text.replace(from, to);
      if (next === text) throw new Error(`edit of ${rel} did not apply: ${String(from)}`);
      text = next;
    }
    writeFileSync(file, text);
  }
}

/** A mutated copy of the fixture contract. */
export function mutate(edits: Edits, from = FIXTURE): string {
  const dir = copyContract(from);
  applyEdits(dir, edits);
  return dir;
}

/** `file:line:col` of the n-th (1-based) occurrence of `needle` in a contract file, as diagnostics show it. */
export function loc(dir: string, rel: string, needle: string, nth = 1): string {
  const file = path.join(dir, rel);
  const text = readFileSync(file, 'utf8');
  let index = -1;
  for (let i = 0; i < nth; i++) {
    index = text.indexOf(needle, index + 1);
    if (index < 0) throw new Error(`${needle} not found ${nth} times in ${rel}`);
  }
  const before = text.slice(0, index).split('\n');
  return `${displayPath(file)}:${before.length}:${before[before.length - 1].length + 1}`;
}

let baseCache: CompiledContract | null = null;
export function fixtureBase(): CompiledContract {
  baseCache ??= compileContract(FIXTURE);
  return baseCache;
}

/** Sets totals.<key> in svc.yaml text to n. */
export function totals(key: string, n: number): [RegExp, string] {
  return [new RegExp(`(\\n  ${key}: )\\d+`), `$1${n}`];
}
