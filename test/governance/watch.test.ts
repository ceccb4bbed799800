// svc generate --watch on a temporary contract: regenerates on change, keeps the last good output
// when the contract breaks, and prints the error with a code frame.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeFrame, startWatch } from '../../generator/tools/watch.ts';
import { entryFile, provenUpToDate, readEntry } from '../../generator/cache.ts';
import { compileAndRecord } from '../../generator/generate.ts';
import { session } from '../../generator/session.ts';
import { cleanupCopies, copyContract, loc } from './helpers.ts';

afterAll(cleanupCopies);

describe('codeFrame', () => {
  it('shows the offending line with a caret under the column', () => {
    const text = 'a: 1\nscope: tasks:wrte\nb: 2\n';
    expect(codeFrame({ file: 'x.yaml', line: 2, col: 8 }, text)).toBe(['  1 | a: 1', '> 2 | scope: tasks:wrte', '    |        ^', '  3 | b: 2'].join('\n'));
  });
});

describe('startWatch', () => {
  it('regenerates, keeps the last good output on a broken contract, recovers on the fix', async () => {
    const dir = copyContract();
    const out = path.join(dir, '..', `${path.basename(dir)}-generated`);
    const errors: string[] = [];
    const outs: string[] = [];
    const w = startWatch({ contract: dir, out, debounceMs: 30, io: { out: (l) => outs.push(l), err: (l) => errors.push(l) } });
    try {
      const first = await w.ready;
      expect(first.ok).toBe(true);
      const openapi = path.join(out, 'openapi.json');
      expect(existsSync(openapi)).toBe(true);
      const good = readFileSync(openapi, 'utf8');

      const notes = path.join(dir, 'families/notes.yaml');
      const original = readFileSync(notes, 'utf8');
      let next = w.nextRun();
      writeFileSync(notes, original.replace('scope: tasks:read', 'scope: tasks:wrte'));
      const broken = await next;
      expect(broken.ok).toBe(false);
      const d = broken.diagnostics.find((x) => x.rule === 'unknown-scope')!;
      expect(`${d.file}:${d.line}:${d.col}`).toBe(loc(dir, 'families/notes.yaml', 'tasks:wrte'));
      expect(readFileSync(openapi, 'utf8')).toBe(good);
      const printed = errors.join('\n');
      expect(printed).toContain(`> ${d.line} |     scope: tasks:wrte`);
      expect(printed).toMatch(/\n\s+\|\s{12}\^/);
      expect(printed).toContain('keeps the last good output');

      next = w.nextRun();
      writeFileSync(notes, original.replace('        q: { type: string, maxLength: 100 }\n', '        q: { type: string, maxLength: 100 }\n        tag: { type: string }\n'));
      const fixed = await next;
      expect(fixed.ok).toBe(true);
      expect(readFileSync(openapi, 'utf8')).not.toBe(good);
      expect(readFileSync(openapi, 'utf8')).toContain('"tag"');
    } finally {
      w.close();
      rmSync(out, { recursive: true, force: true });
    }
  }, 30_000);

  it("records each session's output in the cache once the contract is quiet or the watcher closes: --check is then proven from the hashes, and the entry is a fresh compile's", async () => {
    const dir = copyContract();
    const out = path.join(dir, '..', `${path.basename(dir)}-recorded`);
    rmSync(entryFile(dir), { force: true });
    const w = startWatch({ contract: dir, out, debounceMs: 30, io: { out: () => {}, err: () => {} } });
    try {
      expect((await w.ready).ok).toBe(true);
      // Recorded only once the contract has been quiet (a second), not on the re-emit's path.
      expect(readEntry(dir)).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(provenUpToDate(dir, out)).toBe(true);

      // An edit: the entry is replaced when the watcher closes, its unchanged files' hashes kept.
      const notes = path.join(dir, 'families/notes.yaml');
      const next = w.nextRun();
      writeFileSync(notes, readFileSync(notes, 'utf8').replace('scope: tasks:read', 'scope: tasks:write'));
      expect((await next).ok).toBe(true);
      expect(provenUpToDate(dir, out)).toBe(false);
    } finally {
      w.close();
    }
    expect(provenUpToDate(dir, out)).toBe(true);
    const watched = readEntry(dir);
    rmSync(entryFile(dir), { force: true });
    const longLived = session.longLived;
    session.longLived = false;
    try {
      await compileAndRecord(dir);
    } finally {
      session.longLived = longLived;
    }
    expect(readEntry(dir)).toEqual(watched);
    rmSync(out, { recursive: true, force: true });
  }, 60_000);
});
