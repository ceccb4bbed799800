// Helpers for generator tests: a private copy of contract/ that a test may mutate as YAML text.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkContract } from '../../generator/check.ts';
import { displayPath, loadContract } from '../../generator/load.ts';
import { formatDiagnostic, sortDiagnostics } from '../../generator/source.ts';
import { synthContract } from '../../scripts/synth-contract.ts';
import { forgetSessionMemos, session } from '../../generator/session.ts';
import { afterAll, beforeAll } from 'vitest';

export const CONTRACT_DIR = path.resolve('contract');

/**
 * The totals the spec binds for this contract (platform-api-contract.md, "What the service does" 3
 * and the limits table). Tests that count operations, routes or tools pin them on purpose.
 */
export const SPEC_TOTALS = { operations: 82, reads: 43, commands: 39, families: 23, tools: 54, scopes: 32, eventTypes: 10 } as const;

/** The failure message of every test that pins SPEC_TOTALS. */
export const SPEC_TOTALS_REASON =
  'this test pins the totals the spec binds for this contract (82 operations: 43 reads, 39 commands; 23 families; 54 MCP tools; ' +
  '32 scopes; 10 event types). If the counts changed on purpose (the spec changed, or this is another contract), change totals ' +
  'in contract/svc.yaml and SPEC_TOTALS in test/generator/helpers.ts together';
export const GENERATED_DIR = path.resolve('generated');

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `svc-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export class ContractCopy {
  readonly dir: string;
  private readonly tmp: ReturnType<typeof tempDir>;
  constructor() {
    this.tmp = tempDir('contract');
    this.dir = path.join(this.tmp.dir, 'contract');
    cpSync(CONTRACT_DIR, this.dir, { recursive: true });
  }

  file(rel: string): string {
    return path.join(this.dir, rel);
  }

  read(rel: string): string {
    return readFileSync(this.file(rel), 'utf8');
  }

  /**
   * Replaces the first `from` that follows `anchor` in the file, and returns the position
   * (as the checker reports it) of `mark` (default: `to`) within the replacement.
   */
  mutate(rel: string, anchor: string, from: string, to: string, mark = to): string {
    const text = this.read(rel);
    const a = text.indexOf(anchor);
    if (a < 0) throw new Error(`anchor ${JSON.stringify(anchor)} not in ${rel}`);
    const at = text.indexOf(from, a);
    if (at < 0) throw new Error(`${JSON.stringify(from)} not after ${JSON.stringify(anchor)} in ${rel}`);
    const next = text.slice(0, at) + to + text.slice(at + from.length);
    writeFileSync(this.file(rel), next);
    const markAt = next.indexOf(mark, at);
    if (markAt < 0) throw new Error(`mark ${JSON.stringify(mark)} not found`);
    return this.positionOf(rel, markAt);
  }

  /** `file:line:col` of the first `needle` after `anchor` in the (current) file. */
  locate(rel: string, anchor: string, needle: string): string {
    const text = this.read(rel);
    const a = text.indexOf(anchor);
    if (a < 0) throw new Error(`anchor ${JSON.stringify(anchor)} not in ${rel}`);
    const at = text.indexOf(needle, a);
    if (at < 0) throw new Error(`${JSON.stringify(needle)} not after anchor in ${rel}`);
    return this.positionOf(rel, at);
  }

  private positionOf(rel: string, offset: number): string {
    const before = this.read(rel).slice(0, offset).split('\n');
    return `${displayPath(this.file(rel))}:${before.length}:${before[before.length - 1].length + 1}`;
  }

  /** Every diagnostic of the checker, formatted as the CLI prints them. */
  check(): string[] {
    return sortDiagnostics(checkContract(loadContract(this.dir))).map(formatDiagnostic);
  }

  cleanup(): void {
    this.tmp.cleanup();
  }
}

/**
 * A synthetic contract of `factor` copies of every family (scripts/synth-contract.ts) in a temporary
 * directory, edited as text: the contract the incremental tests edit the way an author does.
 */
export class SynthCopy {
  readonly dir: string;
  private readonly tmp: ReturnType<typeof tempDir>;
  constructor(prefix: string, factor = 2) {
    this.tmp = tempDir(prefix);
    this.dir = synthContract(factor, CONTRACT_DIR, path.join(this.tmp.dir, 'contract'));
  }

  /** A directory beside the contract, for output. */
  get root(): string {
    return this.tmp.dir;
  }

  file(rel: string): string {
    return path.join(this.dir, rel);
  }

  /** Replaces the first `from` in the file; throws when it is not there. */
  edit(rel: string, from: string, to: string): void {
    const text = readFileSync(this.file(rel), 'utf8');
    if (!text.includes(from)) throw new Error(`${JSON.stringify(from)} not in ${rel}`);
    writeFileSync(this.file(rel), text.replace(from, to));
  }

  cleanup(): void {
    this.tmp.cleanup();
  }
}

/**
 * A SynthCopy for the tests of one file: made before them; after them removed, and the watcher's
 * state those tests left (session.longLived, every memo) reset.
 */
export function useSynthCopy(prefix: string): { readonly copy: SynthCopy } {
  const holder = {} as { copy: SynthCopy };
  beforeAll(() => {
    holder.copy = new SynthCopy(prefix);
  });
  afterAll(() => {
    session.longLived = false;
    forgetSessionMemos();
    holder.copy.cleanup();
  });
  return holder;
}
