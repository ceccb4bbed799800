// A family removed from the contract leaves nothing generated behind: `svc generate --prune` (run as
// bin/svc.js in a project directory, so the handler scaffold runs too) deletes every file of the
// output directory the contract no longer produces and that carries the generated-file header, and
// names each; the output is then exactly what a fresh generate of the smaller contract writes. The
// family's handler file stays on a plain generate, with the advice to delete it or run --prune; with
// --prune it goes, with its import and spread in handlers/index.ts (the handlers then are what a fresh
// scaffold of the smaller contract writes), unless another module imports it. A file without the
// header stays, with a warning; a file reached through a symbolic link out of the output directory is
// never deleted.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listFiles } from '../../generator/generate.ts';
import { GENERATED_NOTE } from '../../generator/emit/format.ts';
import { SVC_BIN } from '../support/process.ts';
import { tempDir } from './helpers.ts';

const tmp = tempDir('prune');
afterAll(() => tmp.cleanup());

const project = path.join(tmp.dir, 'project');
const contract = path.join(project, 'contract');
const TOTALS: [string, string][] = [
  ['operations: 3', 'operations: 4'],
  ['reads: 2', 'reads: 3'],
  ['families: 1', 'families: 2'],
  ['tools: 3', 'tools: 4'],
];
const MEMOS = `family: memos
description: Memos.
operations:
  - id: memos.get
    summary: Read a memo
    kind: read
    scope: notes:read
    audience: [operator]
    http: { method: GET, path: "/v1/memos/{memo_id}" }
    input:
      required: [memo_id]
      properties:
        memo_id: { $ref: Id }
    output: { $ref: Note }
    errors: [not_found]
    mcp: { tool: true }
`;

function setTotals(forward: boolean): void {
  const file = path.join(contract, 'svc.yaml');
  let text = readFileSync(file, 'utf8');
  for (const [a, b] of TOTALS) {
    const [from, to] = forward ? [a, b] : [b, a];
    if (!text.includes(from)) throw new Error(`${from} not in svc.yaml`);
    text = text.replace(from, to);
  }
  writeFileSync(file, text);
}

function svc(cwd: string, ...args: string[]) {
  return spawnSync(process.execPath, [SVC_BIN, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
}

const read = (dir: string) => new Map(listFiles(dir).map((rel) => [rel, readFileSync(path.join(dir, rel), 'utf8')]));

describe('svc generate --prune after a family is removed', () => {
  it('deletes the family’s generated files, names each; --prune then deletes its handler file, never unmarked files', () => {
    cpSync('test/fixtures/minimal-contract', contract, { recursive: true });
    writeFileSync(path.join(contract, 'families/memos.yaml'), MEMOS);
    setTotals(true);
    const first = svc(project, 'generate');
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const generated = path.join(project, 'generated');
    const memoFiles = listFiles(generated).filter((rel) => rel.includes('memos'));
    expect(memoFiles).toEqual(['docs/reference/memos.md', 'handlers/memos.ts', 'validators/memos.js']);
    const handler = readFileSync(path.join(project, 'handlers/memos.ts'), 'utf8');

    // A file without the header, and a marked file outside reached through a link: both stay.
    writeFileSync(path.join(generated, 'notes-by-hand.md'), 'mine\n');
    const outside = path.join(tmp.dir, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'old.ts'), `// ${GENERATED_NOTE}\n`);
    symlinkSync(outside, path.join(generated, 'linked'));

    rmSync(path.join(contract, 'families/memos.yaml'));
    setTotals(false);
    const plain = svc(project, 'generate');
    expect(plain.status).toBe(0);
    const removed = plain.stdout.split('\n').filter((l) => l.startsWith('removed '));
    expect(removed).toEqual(memoFiles.map((rel) => `removed ${path.join('generated', rel)}`));
    expect(plain.stdout).toMatch(/, 3 removed\)\.\n$/);
    for (const rel of memoFiles) expect(existsSync(path.join(generated, rel)), rel).toBe(false);
    // Without --prune the handler file is kept byte for byte, with the advice to delete it.
    expect(readFileSync(path.join(project, 'handlers/memos.ts'), 'utf8')).toBe(handler);
    expect(plain.stderr).toContain(
      'handlers/memos.ts:6:3 handles memos.get, but the contract has no family memos any more. Delete handlers/memos.ts and its import and spread in handlers/index.ts, or run `npx svc generate --prune` to delete them.',
    );
    expect(plain.stderr).toContain('warning: generated/notes-by-hand.md is not produced by the contract and carries no generated marker; left in place');
    expect(readFileSync(path.join(outside, 'old.ts'), 'utf8')).toBe(`// ${GENERATED_NOTE}\n`);

    // Another module importing the family's file: --prune refuses to delete it, and says why.
    const user = path.join(project, 'handlers/uses-memos.ts');
    writeFileSync(user, "import { memosHandlers } from './memos.ts';\nexport const count = Object.keys(memosHandlers).length;\n");
    const refused = svc(project, 'generate', '--prune');
    expect(refused.stderr).toContain('handlers/memos.ts: not deleted: uses-memos.ts imports it; delete it and its import and spread in index.ts by hand');
    expect(readFileSync(path.join(project, 'handlers/memos.ts'), 'utf8')).toBe(handler);
    rmSync(user);

    const pruned = svc(project, 'generate', '--prune');
    expect(pruned.status).toBe(0);
    expect(pruned.stdout).toContain('scaffold handlers/memos.ts: deleted and its import and spread in handlers/index.ts: the contract has no family memos any more (memos.get)');
    expect(existsSync(path.join(project, 'handlers/memos.ts'))).toBe(false);
    expect(pruned.stderr).not.toContain('memos');
    // The handlers are what scaffolding the smaller contract writes in a new project.
    const other = path.join(tmp.dir, 'other');
    cpSync(contract, path.join(other, 'contract'), { recursive: true });
    expect(svc(other, 'generate').status).toBe(0);
    expect(read(path.join(project, 'handlers'))).toEqual(read(path.join(other, 'handlers')));

    // The rest is what the smaller contract generates afresh.
    rmSync(path.join(generated, 'notes-by-hand.md'));
    rmSync(path.join(generated, 'linked'));
    const fresh = path.join(tmp.dir, 'fresh');
    const again = svc(project, 'generate', '--contract', contract, '--out', fresh);
    expect(again.status).toBe(0);
    expect(read(generated)).toEqual(read(fresh));
  });
});
