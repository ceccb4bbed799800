// The validators' and docs' memos (generator/emit/validators.ts, docs.ts and their helpers) against the
// same emitters without memos: on each model a watcher builds, emitValidators and emitDocs give with
// their memos exactly what they give without (session.longLived false). incremental.test.ts compares
// whole compiles; this holds the model fixed and emits each model twice. (Two operations that would
// generate the same schema names, pascal('tasks.x2_list') and pascal('tasks_x2.list'), are refused by
// the checks, generated-name-clash, so no model holds them.)
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { emitDocs } from '../../generator/emit/docs.ts';
import { asTexts } from '../../generator/emit/pieces.ts';
import { emitValidators } from '../../generator/emit/validators.ts';
import { loadContractAsync } from '../../generator/load.ts';
import { buildModel, type Model } from '../../generator/model.ts';
import { forgetSessionMemos, session } from '../../generator/session.ts';
import { useSynthCopy } from './helpers.ts';

const synth = useSynthCopy('incremental-emitters');
let dir: string;
beforeAll(() => {
  dir = synth.copy.dir;
});

const file = (rel: string) => synth.copy.file(rel);
const edit = (rel: string, from: string, to: string) => synth.copy.edit(rel, from, to);

type RawOp = { id: string; kind: string; http: { path: string }; mcp?: { tool?: boolean }; input?: { properties: Record<string, { description?: string }> } };

/** A family file's operations, changed by `change` (the file written back as YAML). */
function editOperations(rel: string, change: (ops: RawOp[]) => void): void {
  const doc = parse(readFileSync(file(rel), 'utf8')) as { operations: RawOp[] };
  change(doc.operations);
  writeFileSync(file(rel), stringify(doc));
}

/** svc.yaml's totals moved by one read operation that is an MCP tool (sign -1: removed). */
function moveTotalsByOneReadTool(sign: 1 | -1): void {
  let text = readFileSync(file('svc.yaml'), 'utf8');
  const totals = (parse(text) as { totals: Record<string, number> }).totals;
  for (const key of ['operations', 'reads', 'tools']) text = text.replace(new RegExp(`(\\n  ${key}: )\\d+`), `$1${totals[key]! + sign}`);
  writeFileSync(file('svc.yaml'), text);
}

function emitted(model: Model): Map<string, string> {
  const validators = emitValidators(model);
  // A watcher's aggregate docs are pieces (family-memo.ts keptPieces): compared as their text.
  return new Map([['validators.js', validators.js], ['validators.d.ts', validators.dts], ...validators.families, ...asTexts(emitDocs(model))]);
}

/** The model a watcher builds now, emitted with the memos, then without: the same files, the same texts. */
async function expectSameWithoutMemos(): Promise<Map<string, string>> {
  session.longLived = true;
  const model = buildModel(await loadContractAsync(dir));
  const kept = emitted(model);
  session.longLived = false;
  const fresh = emitted(model);
  session.longLived = true;
  expect([...kept.keys()]).toEqual([...fresh.keys()]);
  const differing = [...fresh].filter(([name, text]) => kept.get(name) !== text).map(([name]) => name);
  expect(differing, 'files the memos got wrong').toEqual([]);
  return kept;
}

describe("the validators' and docs' memos give what the emitters give without them", () => {
  it('on each model a watcher builds, through edits of one family, of what two families share, and of a schema name two families generate', async () => {
    session.longLived = true;
    forgetSessionMemos();
    const first = await expectSameWithoutMemos();

    // A family's description (its reference page, the agent guide, llms.txt, the search index).
    edit('families/tasks.yaml', 'Work items, client-bound', 'Work items (edited), client-bound');
    await expectSameWithoutMemos();
    // A tool's summary in another family (the tools/list size the guides show).
    editOperations('families/tasks_x2.yaml', (ops) => {
      const op = ops.find((o) => o.id === 'tasks_x2.list') as RawOp & { summary: string };
      op.summary = `${op.summary}, newest first`;
    });
    await expectSameWithoutMemos();

    // The validator tasks.list and tasks_x2.list share (compiled in tasks.js) edited in tasks, and back.
    edit('families/tasks.yaml', 'Matches the owner and co-assignees.', 'Matches the owner and co-assignees (edited).');
    const moved = await expectSameWithoutMemos();
    expect(moved.get('validators/tasks_x2.js')).not.toBe(first.get('validators/tasks_x2.js'));
    edit('families/tasks.yaml', 'Matches the owner and co-assignees (edited).', 'Matches the owner and co-assignees.');
    await expectSameWithoutMemos();

    // An operation added to one family that reads what another family's operation reads (a copy of
    // tasks.list under its own name: the validator they share), then an edit of that other family.
    const tasksText = readFileSync(file('families/tasks.yaml'), 'utf8');
    editOperations('families/tasks.yaml', (ops) => {
      const again = { ...structuredClone(ops.find((o) => o.id === 'tasks.list')!), id: 'tasks.list_again' };
      again.http.path = '/v1/tasks-again';
      ops.push(again);
    });
    moveTotalsByOneReadTool(1);
    const added = await expectSameWithoutMemos();
    expect([...added.values()].some((text) => text.includes('tasks.list_again'))).toBe(true);
    editOperations('families/tasks_x2.yaml', (ops) => {
      const assignee = ops.find((o) => o.id === 'tasks_x2.list')!.input!.properties.assigneeId!;
      assignee.description = `${assignee.description} (x2)`;
    });
    const followed = await expectSameWithoutMemos();
    expect(followed.get('validators/tasks_x2.js')).not.toBe(added.get('validators/tasks_x2.js'));
    writeFileSync(file('families/tasks.yaml'), tasksText);
    moveTotalsByOneReadTool(-1);
    await expectSameWithoutMemos();

    // A schema every family refers to (every family's part new).
    edit('schemas/common.yaml', 'An RFC 3339 instant in UTC.', 'An RFC 3339 instant in UTC (edited).');
    await expectSameWithoutMemos();
  }, 300_000);
});
