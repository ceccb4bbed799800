// Handler scaffolding on a temporary copy of handlers/, and the unimplemented listing.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../generator/load.ts';
import { buildModel } from '../../generator/model.ts';
import { handlersExportName, lintHandlers, listUnimplemented, scaffoldHandlers, staleAdvice } from '../../generator/tools/scaffold.ts';

const model = buildModel(loadContract('contract'));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function copyHandlers(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-handlers-'));
  dirs.push(dir);
  cpSync('handlers', dir, { recursive: true });
  return dir;
}

const parses = (text: string) =>
  ((ts.createSourceFile('x.ts', text, ts.ScriptTarget.ES2022, true) as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics ?? []).length === 0;

describe('scaffoldHandlers', () => {
  it('names the export after the family', () => {
    expect(handlersExportName('oauth_grants')).toBe('oauthGrantsHandlers');
    expect(handlersExportName('tasks')).toBe('tasksHandlers');
  });

  it('inserts a typed notImplemented entry without touching existing bodies', () => {
    const dir = copyHandlers();
    const file = path.join(dir, 'projects.ts');
    const before = readFileSync(file, 'utf8');
    const report = scaffoldHandlers({
      handlersDir: dir,
      contractOps: ['projects.list', 'projects.get', 'projects.create', 'projects.update', 'projects.stage.advance', 'projects.archive'].map((id) => ({ id, family: 'projects' })),
    });
    expect(report.errors).toEqual([]);
    expect(report.updated).toEqual([{ file, added: ['projects.archive'] }]);
    const after = readFileSync(file, 'utf8');
    expect(parses(after)).toBe(true);
    expect(after).toContain("  'projects.archive': notImplemented('projects.archive'),\n} satisfies ProjectsHandlers;");
    expect(after).toContain("import { notImplemented } from '../runtime/pipeline/not-implemented.ts';");
    // Only the import line and the entry were added: every line of the old file is still there, in order.
    const added = after.split('\n').filter((l) => !before.split('\n').includes(l));
    expect(added).toEqual(["import { notImplemented } from '../runtime/pipeline/not-implemented.ts';", "  'projects.archive': notImplemented('projects.archive'),"]);
    // Running it again changes nothing.
    const again = scaffoldHandlers({ handlersDir: dir, contractOps: [{ id: 'projects.archive', family: 'projects' }] });
    expect(again.updated).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(after);
  });

  it('adds the missing comma after a last entry without one, and handles an empty object', () => {
    const dir = copyHandlers();
    const file = path.join(dir, 'x.ts');
    writeFileSync(file, "// x\nexport const xHandlers = {\n  'x.a': async () => ({ ok: true })\n};\n");
    writeFileSync(path.join(dir, 'y.ts'), 'export const yHandlers = {};\n');
    const report = scaffoldHandlers({ handlersDir: dir, contractOps: [{ id: 'x.a', family: 'x' }, { id: 'x.b', family: 'x' }, { id: 'y.a', family: 'y' }], updateIndex: false });
    expect(report.errors).toEqual([]);
    const x = readFileSync(file, 'utf8');
    expect(x).toBe("// x\nimport { notImplemented } from '../runtime/pipeline/not-implemented.ts';\nexport const xHandlers = {\n  'x.a': async () => ({ ok: true }),\n  'x.b': notImplemented('x.b'),\n};\n");
    const y = readFileSync(path.join(dir, 'y.ts'), 'utf8');
    expect(parses(y)).toBe(true);
    expect(y).toContain("'y.a': notImplemented('y.a'),");
  });

  it('creates a missing family file (ending with satisfies <Family>Handlers) and registers it in index.ts', () => {
    const dir = copyHandlers();
    const report = scaffoldHandlers({ handlersDir: dir, contractOps: [{ id: 'widgets.make', family: 'widgets' }] });
    expect(report.created.map((c) => path.basename(c.file))).toEqual(['widgets.ts']);
    expect(readFileSync(path.join(dir, 'widgets.ts'), 'utf8')).toBe(
      "// widgets.*: not implemented yet; every operation answers 501 not_implemented.\nimport type { WidgetsHandlers } from '../generated/handlers/widgets.ts';\nimport { notImplemented } from '../runtime/pipeline/not-implemented.ts';\n\nexport const widgetsHandlers = {\n  'widgets.make': notImplemented('widgets.make'),\n} satisfies WidgetsHandlers;\n",
    );
    const index = readFileSync(path.join(dir, 'index.ts'), 'utf8');
    expect(parses(index)).toBe(true);
    expect(index).toContain("import { widgetsHandlers } from './widgets.ts';");
    expect(index).toContain('  ...widgetsHandlers,\n};');
  });

  it('reports stale entries with their lines; --prune deletes them (comments and commas too) and the import no stub needs', () => {
    const dir = copyHandlers();
    const file = path.join(dir, 'x.ts');
    writeFileSync(
      file,
      "// x\nimport { helper, notImplemented } from '../runtime/pipeline/not-implemented.ts';\nexport const xHandlers = {\n  'x.a': async () => helper(),\n  // old, renamed to x.c\n  'x.b': notImplemented('x.b'),\n  'x.c': async () => 1\n};\n",
    );
    const ops = [{ id: 'x.a', family: 'x' }, { id: 'x.c', family: 'x' }];
    const report = scaffoldHandlers({ handlersDir: dir, contractOps: ops, updateIndex: false });
    expect(report.stale.filter((s) => s.file === file)).toEqual([{ file, id: 'x.b', line: 6, col: 3, lines: [5, 6], familyGone: false, pruned: false }]);
    expect(readFileSync(file, 'utf8')).toContain("'x.b'");
    const pruned = scaffoldHandlers({ handlersDir: dir, contractOps: ops, updateIndex: false, prune: true });
    expect(pruned.stale.filter((s) => s.file === file).map((s) => s.pruned)).toEqual([true]);
    expect(pruned.importRemoved).toEqual([file]);
    expect(readFileSync(file, 'utf8')).toBe("// x\nimport { helper } from '../runtime/pipeline/not-implemented.ts';\nexport const xHandlers = {\n  'x.a': async () => helper(),\n  'x.c': async () => 1\n};\n");
  });

  it('keeps the notImplemented import while a stub uses it, and drops the whole line once none does', () => {
    const dir = copyHandlers();
    const file = path.join(dir, 'w.ts');
    const head = "// w\nimport { notImplemented } from '../runtime/pipeline/not-implemented.ts';\n";
    writeFileSync(file, `${head}export const wHandlers = {\n  'w.a': notImplemented('w.a'),\n};\n`);
    expect(scaffoldHandlers({ handlersDir: dir, contractOps: [{ id: 'w.a', family: 'w' }], updateIndex: false }).importRemoved).toEqual([]);
    writeFileSync(file, `${head}export const wHandlers = {\n  'w.a': async () => 1,\n};\n`);
    expect(scaffoldHandlers({ handlersDir: dir, contractOps: [{ id: 'w.a', family: 'w' }], updateIndex: false }).importRemoved).toEqual([file]);
    expect(readFileSync(file, 'utf8')).toBe("// w\nexport const wHandlers = {\n  'w.a': async () => 1,\n};\n");
  });

  it('a family the contract no longer has: each entry of its file is stale, and the advice is to delete the file', () => {
    const dir = copyHandlers();
    const report = scaffoldHandlers({ handlersDir: dir, contractOps: [{ id: 'meta.get', family: 'meta' }], updateIndex: false, dryRun: true });
    const gone = report.stale.filter((s) => s.familyGone && s.id === 'tasks.get');
    expect(gone).toHaveLength(1);
    expect(staleAdvice(gone[0])).toMatch(/handles tasks\.get, but the contract has no family tasks any more\. Delete \S+tasks\.ts and its import and spread in \S+index\.ts, or run `npx svc generate --prune` to delete them\.$/);
  });

  it('--prune deletes a gone family’s file and its import and spread in index.ts, keeping every other line', () => {
    const dir = copyHandlers();
    const index = path.join(dir, 'index.ts');
    const before = readFileSync(index, 'utf8');
    const ops = model.operations.map((o) => o.def).filter((op) => op.family !== 'timeline');
    const report = scaffoldHandlers({ handlersDir: dir, contractOps: ops, prune: true });
    expect(report.errors).toEqual([]);
    expect(report.removedFamilies).toEqual([{ file: path.join(dir, 'timeline.ts'), ids: ['timeline.list'], indexEdited: true }]);
    expect(existsSync(path.join(dir, 'timeline.ts'))).toBe(false);
    const expected = before.replace("import { timelineHandlers } from './timeline.ts';\n", '').replace('  ...timelineHandlers,\n', '');
    expect(expected).not.toBe(before);
    expect(readFileSync(index, 'utf8')).toBe(expected);
  });

  it('refuses a file it cannot edit safely and leaves it untouched', () => {
    const dir = copyHandlers();
    const file = path.join(dir, 'z.ts');
    writeFileSync(file, 'export function zHandlers() { return {}; }\n');
    const report = scaffoldHandlers({ handlersDir: dir, contractOps: [{ id: 'z.a', family: 'z' }] });
    expect(report.errors[0].message).toMatch(/no exported handlers object/);
    expect(readFileSync(file, 'utf8')).toBe('export function zHandlers() { return {}; }\n');
  });
});

describe('listUnimplemented and svc lint --require-all', () => {
  it('lists placeholders by their marker and fails with --require-all while any remain', async () => {
    const { placeholders, missing } = await listUnimplemented({ handlersIndex: 'handlers/index.ts', contractDir: 'contract' });
    expect(missing).toEqual([]);
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    const code = await lintHandlers([], io);
    const strict = await lintHandlers(['--require-all'], io);
    if (placeholders.length) {
      expect(lines.join('\n')).toContain(`not implemented: ${placeholders[0]}`);
      expect(code).toBe(0);
      expect(strict).toBe(1);
    } else {
      expect(code).toBe(0);
      expect(strict).toBe(0);
    }
  }, 60_000);

  it('finds a notImplemented placeholder in a handlers index', async () => {
    const dir = mkdtempSync(path.join(process.cwd(), 'test/governance/.tmp-handlers-'));
    dirs.push(dir);
    writeFileSync(
      path.join(dir, 'index.ts'),
      "import { notImplemented } from '../../../runtime/pipeline/not-implemented.ts';\nexport const handlers = { 'a.b': notImplemented('a.b'), 'a.c': async () => 1 };\n",
    );
    const result = await listUnimplemented({ handlersIndex: path.join(dir, 'index.ts'), contractDir: 'test/fixtures/governance/contract' });
    expect(result.placeholders).toEqual(['a.b']);
    expect(result.missing).toContain('notes.list');
  });
});
