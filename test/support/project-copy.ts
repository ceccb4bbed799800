// A private copy of the project as a contract author has it (contract/, handlers/, generated/ and the
// package's settings, with runtime/ and node_modules/ linked), where the `svc` commands run as the README says, from its root.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SVC_BIN } from './process.ts';

export interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

export class ProjectCopy {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'svc-project-'));

  constructor(root = process.cwd()) {
    for (const name of ['contract', 'handlers', 'generated']) cpSync(path.join(root, name), path.join(this.dir, name), { recursive: true });
    // package.json: "type": "module", so that tsx loads the copied handlers as ES modules.
    for (const name of ['package.json', 'tsconfig.json', 'redocly.yaml']) cpSync(path.join(root, name), path.join(this.dir, name));
    for (const name of ['runtime', 'demo', 'node_modules']) symlinkSync(path.join(root, name), path.join(this.dir, name), 'dir');
  }

  file(rel: string): string {
    return path.join(this.dir, rel);
  }

  read(rel: string): string {
    return readFileSync(this.file(rel), 'utf8');
  }

  write(rel: string, text: string): void {
    writeFileSync(this.file(rel), text);
  }

  /** Replaces the first `from` after `anchor` (each must be present). */
  edit(rel: string, from: string, to: string, anchor = ''): void {
    const text = this.read(rel);
    const a = text.indexOf(anchor);
    const at = a < 0 ? -1 : text.indexOf(from, a);
    if (at < 0) throw new Error(`${JSON.stringify(from)} not found after ${JSON.stringify(anchor)} in ${rel}`);
    this.write(rel, text.slice(0, at) + to + text.slice(at + from.length));
  }

  /** `line:col` (1-based) of the first `needle` in a file. */
  lineCol(rel: string, needle: string): { line: number; col: number } {
    const text = this.read(rel);
    const at = text.indexOf(needle);
    if (at < 0) throw new Error(`${JSON.stringify(needle)} not in ${rel}`);
    const before = text.slice(0, at).split('\n');
    return { line: before.length, col: before[before.length - 1].length + 1 };
  }

  /** `svc <args>` from the copy's root, as an author runs `npx svc <args>`. */
  svc(...args: string[]): Run {
    const run = spawnSync(process.execPath, [SVC_BIN, ...args], {
      cwd: this.dir,
      encoding: 'utf8',
      env: { ...process.env, SVC_NO_BUILD: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    return { status: run.status ?? 1, stdout: run.stdout, stderr: run.stderr };
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
