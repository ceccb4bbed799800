// An edit of one family's schemas changes that family's validators file and the shared files, and no
// other family's validators (generated/validators/<family>.js: issue 28). The same edit through
// svc generate --watch re-emits and reports the time it took.
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { compileContract } from '../../generator/generate.ts';
import { startWatch } from '../../generator/tools/watch.ts';
import { ContractCopy, tempDir } from './helpers.ts';

const EDIT = ['families/tasks.yaml', 'assigneeId: { $ref: Id, description: Matches the owner and co-assignees. }', 'Matches the owner', 'Matches the owner (edited)'] as const;

function changed(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => before.get(n) !== after.get(n)).sort();
}

describe('a one-family edit', () => {
  it("changes that family's validators and the shared files only", async () => {
    const copy = new ContractCopy();
    try {
      const before = await compileContract(copy.dir);
      copy.mutate(...EDIT);
      const after = await compileContract(copy.dir);
      const diff = changed(before, after);
      expect(diff.filter((f) => f.startsWith('validators/'))).toEqual(['validators/tasks.js']);
      expect(diff).toContain('openapi.json');
      expect(diff).toContain('docs/reference/tasks.md');
      // Another family's reference page and handlers interface are untouched.
      expect(diff.filter((f) => f.startsWith('docs/reference/') && f !== 'docs/reference/tasks.md')).toEqual([]);
      expect(diff.filter((f) => f.startsWith('handlers/'))).toEqual([]);
      // Every family still has its validators file, and the index re-exports each.
      const families = [...after.keys()].filter((f) => f.startsWith('validators/')).map((f) => path.basename(f, '.js'));
      expect(families.length).toBeGreaterThan(1);
      for (const family of families) expect(after.get('validators.js')).toContain(`from './validators/${family}.js';`);
    } finally {
      copy.cleanup();
    }
  }, 120_000);

  it('through --watch: re-emitted, with the time of the re-emit', async () => {
    const copy = new ContractCopy();
    const out = tempDir('watch-one-family');
    const lines: string[] = [];
    const w = startWatch({ contract: copy.dir, out: out.dir, debounceMs: 30, io: { out: (l) => lines.push(l), err: (l) => lines.push(l) } });
    try {
      expect((await w.ready).ok).toBe(true);
      const next = w.nextRun();
      copy.mutate(...EDIT);
      const run = await next;
      expect(run.ok).toBe(true);
      expect(run.written).toBeGreaterThan(0);
      expect(run.ms).toBeGreaterThan(0);
      expect(lines.at(-1)).toMatch(/generated .* in \d+ ms \(\d+ written/);
    } finally {
      w.close();
      copy.cleanup();
      out.cleanup();
    }
  }, 120_000);
});
