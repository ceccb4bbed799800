// svc generate --watch compiles again after each edit, keeping what it derived from the files that did
// not change (session.ts: the loader's parsed files, the model's family parts, each emitter's memos).
// Whatever it keeps, each compile must produce exactly what a fresh compile of the same contract does.
// A contract of two copies of every family is edited in each way an author edits (one family's text,
// another family's operation, svc.yaml, a shared schema, a family added and removed with the totals,
// an error and its fix, a validator two families share changing owner), and after each edit the
// watcher's compile is compared, file by file, with a fresh one (session.longLived false: no memo is
// read or written). incremental-emitters.test.ts checks the emitters' memos on cases the model does
// not keep the same as a fresh build.
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { compileContract, listFiles } from '../../generator/generate.ts';
import { startWatch } from '../../generator/tools/watch.ts';
import { forgetSessionMemos, session } from '../../generator/session.ts';
import { ContractError, formatDiagnostic } from '../../generator/source.ts';
import { useSynthCopy } from './helpers.ts';

const synth = useSynthCopy('incremental');
let dir: string;
beforeAll(() => {
  dir = synth.copy.dir;
});

const file = (rel: string) => synth.copy.file(rel);
const edit = (rel: string, from: string, to: string) => synth.copy.edit(rel, from, to);

/** The watcher's compile (memos kept) and a fresh one of the same files: the same files, the same texts. */
async function expectSameAsFresh(): Promise<Map<string, string>> {
  session.longLived = true;
  const incremental = await compileContract(dir);
  session.longLived = false;
  const fresh = await compileContract(dir);
  session.longLived = true;
  expect([...incremental.keys()]).toEqual([...fresh.keys()]);
  const differing = [...fresh].filter(([name, text]) => incremental.get(name) !== text).map(([name]) => name);
  expect(differing, 'files the incremental compile got wrong').toEqual([]);
  return incremental;
}

/** After `change`, the watcher's compile fails with exactly the diagnostics of a fresh one. */
async function expectSameErrors(change: () => void): Promise<void> {
  change();
  const errors = async () => {
    try {
      await compileContract(dir);
    } catch (err) {
      if (err instanceof ContractError) return err.diagnostics.map(formatDiagnostic);
      throw err;
    }
    throw new Error('the contract compiled; an error was expected');
  };
  session.longLived = true;
  const incremental = await errors();
  session.longLived = false;
  const fresh = await errors();
  session.longLived = true;
  expect(incremental.length).toBeGreaterThan(0);
  expect(incremental).toEqual(fresh);
}

/** svc.yaml's totals moved by what one family file holds (sign -1: the family removed). */
function moveTotals(familyText: string, sign: 1 | -1): void {
  const ops = (parse(familyText) as { operations: { kind: string; mcp?: { tool?: boolean } }[] }).operations;
  const svc = readFileSync(file('svc.yaml'), 'utf8');
  const totals = (parse(svc) as { totals: Record<string, number> }).totals;
  const next: Record<string, number> = {
    operations: totals.operations! + sign * ops.length,
    reads: totals.reads! + sign * ops.filter((o) => o.kind === 'read').length,
    commands: totals.commands! + sign * ops.filter((o) => o.kind === 'command').length,
    families: totals.families! + sign,
    tools: totals.tools! + sign * ops.filter((o) => o.mcp?.tool === true).length,
  };
  let text = svc;
  for (const [key, value] of Object.entries(next)) text = text.replace(new RegExp(`(\\n  ${key}: )\\d+`), `$1${value}`);
  writeFileSync(file('svc.yaml'), text);
}

describe('a watcher compiles each edit as a fresh compile would', () => {
  it('after edits to families, svc.yaml and schemas, an error and its fix, and families added and removed', async () => {
    session.longLived = true;
    forgetSessionMemos();
    const first = await compileContract(dir);
    expect(first.size).toBeGreaterThan(40);

    // One family's description; then an operation of another family (its copy).
    edit('families/tasks.yaml', 'Work items, client-bound', 'Work items (edited), client-bound');
    await expectSameAsFresh();
    edit('families/tasks_x2.yaml', 'List tasks', 'List the tasks');
    await expectSameAsFresh();

    // svc.yaml outside the families (the environment every family part is built in).
    edit('svc.yaml', 'totals:', '# a comment the model never sees\ntotals:');
    await expectSameAsFresh();
    const svcInfo = (parse(readFileSync(file('svc.yaml'), 'utf8')) as { info: { title: string } }).info.title;
    edit('svc.yaml', `title: ${svcInfo}`, `title: ${svcInfo} (renamed)`);
    const renamed = await expectSameAsFresh();
    expect(renamed.get('openapi.json')).toContain('(renamed)');

    // A shared schema every family refers to.
    edit('schemas/common.yaml', 'An RFC 3339 instant in UTC.', 'An RFC 3339 instant in UTC (edited).');
    const reworded = await expectSameAsFresh();
    expect(reworded.get('types.ts')).toContain('(edited)');

    // An error, then its fix: the compile after the fix is whole.
    const before = readFileSync(file('families/tasks.yaml'), 'utf8');
    writeFileSync(file('families/tasks.yaml'), before.replace('kind: read', 'kind: reed'));
    session.longLived = true;
    await expect(compileContract(dir)).rejects.toBeInstanceOf(ContractError);
    writeFileSync(file('families/tasks.yaml'), before);
    await expectSameAsFresh();

    // An error only another family shows: a route that duplicates one of an unchanged family (whose
    // checks a watcher kept); then a shape error. The watcher reports what a fresh check reports.
    await expectSameErrors(() => edit('families/tasks_x2.yaml', 'path: /v1/x2/tasks\n', 'path: /v1/tasks\n'));
    await expectSameErrors(() => edit('families/tasks_x2.yaml', 'kind: read', 'kind: 7'));
    writeFileSync(file('families/tasks_x2.yaml'), readFileSync(file('families/tasks_x2.yaml'), 'utf8').replace('path: /v1/tasks\n', 'path: /v1/x2/tasks\n').replace('kind: 7', 'kind: read'));
    await expectSameAsFresh();

    // An id of one family that gives the Pascal name of an unchanged family's id (tasks.x2_list and
    // tasks_x2.list: TasksX2List): reported as a fresh check reports it, then fixed.
    await expectSameErrors(() => edit('families/tasks.yaml', '- id: tasks.list\n', '- id: tasks.x2_list\n'));
    edit('families/tasks.yaml', '- id: tasks.x2_list\n', '- id: tasks.list\n');
    await expectSameAsFresh();

    // A family added (a third copy of tasks) with the totals, then removed again.
    const copy = readFileSync(file('families/tasks_x2.yaml'), 'utf8').replaceAll('tasks_x2', 'tasks_x3').replaceAll('/v1/x2/', '/v1/x3/');
    writeFileSync(file('families/tasks_x3.yaml'), copy);
    moveTotals(copy, 1);
    const added = await expectSameAsFresh();
    expect([...added.keys()].some((name) => name.includes('tasks_x3'))).toBe(true);
    rmSync(file('families/tasks_x3.yaml'));
    moveTotals(copy, -1);
    const removed = await expectSameAsFresh();
    expect([...removed.keys()].some((name) => name.includes('tasks_x3'))).toBe(false);
  }, 300_000);

  it('writes what a fresh compile produces, its large files from their pieces', async () => {
    forgetSessionMemos();
    const out = path.join(synth.copy.root, 'watch-out');
    const quiet = { out: () => {}, err: () => {} };
    const watcher = startWatch({ contract: dir, out, debounceMs: 20, io: quiet });
    const onDisk = () => new Map(listFiles(out).map((name) => [name, readFileSync(path.join(out, name), 'utf8')]));
    try {
      expect((await watcher.ready).ok).toBe(true);
      for (const [rel, from, to] of [
        ['families/tasks.yaml', 'Work items', 'Work items (edit 1)'],
        ['families/tasks.yaml', 'Work items (edit 1)', 'Work items'],
        ['schemas/common.yaml', 'An RFC 3339 instant in UTC (edited).', 'An RFC 3339 instant, in UTC.'],
      ] as const) {
        const next = watcher.nextRun();
        edit(rel, from, to);
        const run = await next;
        expect(run.ok).toBe(true);
        expect(run.written).toBeGreaterThan(0);
        session.longLived = false;
        const fresh = await compileContract(dir);
        session.longLived = true;
        const written = onDisk();
        expect([...written.keys()]).toEqual([...fresh.keys()].sort());
        expect([...fresh].filter(([name, text]) => written.get(name) !== text).map(([name]) => name)).toEqual([]);
      }
    } finally {
      watcher.close();
      session.longLived = false;
    }
  }, 300_000);

  it('after edits that move a validator two families share from one to the other and back', async () => {
    session.longLived = true;
    const before = await expectSameAsFresh();
    const sharedText = 'Matches the owner and co-assignees.';

    // tasks.list's input is tasks_x2.list's too, so one validator serves both, compiled in tasks.js
    // (the first family with it) and imported by tasks_x2.js. Edit it in tasks: tasks_x2.js now
    // compiles it itself; undo the edit: tasks_x2.js imports it again.
    expect(before.get('validators/tasks_x2.js')).toMatch(/from '\.\/tasks\.js'/);
    edit('families/tasks.yaml', sharedText, 'Matches the owner and co-assignees (edited).');
    const moved = await expectSameAsFresh();
    expect(moved.get('validators/tasks_x2.js')).not.toBe(before.get('validators/tasks_x2.js'));
    edit('families/tasks.yaml', 'Matches the owner and co-assignees (edited).', sharedText);
    const back = await expectSameAsFresh();
    expect(back.get('validators/tasks_x2.js')).toBe(before.get('validators/tasks_x2.js'));
  }, 300_000);
});
