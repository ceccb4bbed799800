// A contract needs declare no problem code or limit the runtime needs: the minimal fixture
// (test/fixtures/minimal-contract: one family, three operations, one problem and one limit declared)
// compiles, and its generated facts hold every built-in code and limit, its own declarations taking
// precedence. A principal the runtime does not authenticate is refused where it is written.
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileWithModel } from '../../generator/generate.ts';
import { displayPath } from '../../generator/load.ts';
import type { Model } from '../../generator/model.ts';
import { STANDARD_LIMITS, STANDARD_PROBLEMS } from '../../generator/standard-library.ts';
import { tempDir } from './helpers.ts';

const FIXTURE = 'test/fixtures/minimal-contract';
const tmp = tempDir('minimal');
afterAll(() => tmp.cleanup());

/** A copy of the fixture with one text replaced in svc.yaml; its directory. */
function fixtureWith(from: string, to: string): string {
  const dir = path.join(tmp.dir, `contract-${Math.random().toString(36).slice(2)}`);
  cpSync(FIXTURE, dir, { recursive: true });
  const file = path.join(dir, 'svc.yaml');
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${JSON.stringify(from)} not in svc.yaml`);
  writeFileSync(file, text.replace(from, to));
  return dir;
}

describe('the minimal contract, with the standard library', () => {
  let compiled: { files: Map<string, string>; model: Model };
  const compile = async () => (compiled ??= await compileWithModel(FIXTURE));

  it('compiles with three operations', async () => {
    const { model } = await compile();
    expect(model.operations.map((o) => o.def.id)).toEqual(['notes.create', 'notes.get', 'notes.list']);
  });

  it('publishes the page size limits as a paged read’s pageSize (it has no PageSize schema)', async () => {
    const { model } = await compile();
    const input = model.schemas.NotesListInput as { properties: Record<string, unknown> };
    expect(input.properties.pageSize).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
  });

  it('has every built-in problem code, its declared one taking precedence', async () => {
    const { model } = await compile();
    for (const [code, p] of Object.entries(STANDARD_PROBLEMS)) {
      const expected = code === 'not_found' ? { title: 'There is no such note' } : { title: p.title, retryAfter: p.retryAfter };
      expect(model.service.problems[code], code).toMatchObject({ code, status: p.status, retry: p.retry, ...expected });
    }
  });

  it('has every built-in limit, its declared one taking precedence', async () => {
    const { model } = await compile();
    const expected = Object.fromEntries(Object.entries(STANDARD_LIMITS).map(([name, l]) => [name, l.value]));
    expect(model.limits).toEqual({ ...expected, pageSizeMax: 100 });
  });

  it('generates contract.ts with them, and every implied code of its operations in the catalogue', async () => {
    const { files, model } = await compile();
    const contractTs = files.get('contract.ts')!;
    for (const code of Object.keys(STANDARD_PROBLEMS)) expect(contractTs).toContain(`"${code}": {`);
    for (const name of Object.keys(STANDARD_LIMITS)) expect(contractTs).toContain(`readonly ${name}: number;`);
    for (const op of model.operations) for (const code of op.def.problems) expect(model.service.problems, `${op.def.id}: ${code}`).toHaveProperty([code]);
  });
});

describe('principals the runtime does not authenticate', () => {
  it('svc generate refuses one, where it is written, naming the kinds it supports', () => {
    const dir = fixtureWith('principals:\n', 'principals:\n  - { name: user, description: A customer. }\n');
    const run = spawnSync(process.execPath, ['bin/svc.js', 'generate', '--contract', dir, '--out', path.join(tmp.dir, 'out')], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    const line = readFileSync(path.join(dir, 'svc.yaml'), 'utf8').split('\n').findIndex((l) => l.includes('name: user')) + 1;
    expect(run.stderr).toContain(
      `${displayPath(path.join(dir, 'svc.yaml'))}:${line}:13 error [unknown-principal] Principal "user" is not a kind the runtime authenticates, so no caller could reach an operation for it. Use operator, client_admin, service_account`,
    );
  });
});
