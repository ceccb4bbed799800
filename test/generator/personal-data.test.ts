// svc.yaml `personalData` (docs/decisions.md, "Personal data's scope"): the scope that unlocks personal
// data is the contract's. Declared, it reaches the generated facts the runtime's Policy reads; a scope
// that svc.yaml does not declare is refused where it is written; absent, the facts carry none.
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileWithModel } from '../../generator/generate.ts';
import { displayPath } from '../../generator/load.ts';
import { tempDir } from './helpers.ts';

const FIXTURE = 'test/fixtures/minimal-contract';
const tmp = tempDir('personal-data');
afterAll(() => tmp.cleanup());

/** A copy of the minimal contract whose svc.yaml declares `personalData: { scope }`; its directory. */
function fixtureWithScope(scope: string): string {
  const dir = path.join(tmp.dir, `contract-${Math.random().toString(36).slice(2)}`);
  cpSync(FIXTURE, dir, { recursive: true });
  const file = path.join(dir, 'svc.yaml');
  const text = readFileSync(file, 'utf8');
  if (!text.includes('\nscopes:\n')) throw new Error('no scopes: in the minimal svc.yaml');
  writeFileSync(file, text.replace('\nscopes:\n', `\npersonalData:\n  scope: ${scope}\n\nscopes:\n`));
  return dir;
}

const lineOf = (file: string, needle: string) => readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(needle)) + 1;

describe('personalData: the scope that unlocks personal data', () => {
  it('is absent from the facts when svc.yaml declares none (the minimal contract)', async () => {
    const { model } = await compileWithModel(FIXTURE);
    expect(model.service.personalData).toBeUndefined();
    expect('personalData' in model.service).toBe(false);
  });

  it('reaches the facts when it names a declared scope', async () => {
    const { model } = await compileWithModel(fixtureWithScope('notes:read'));
    expect(model.service.personalData).toEqual({ scope: 'notes:read' });
  });

  it('is refused at file:line:col when svc.yaml does not declare the scope', () => {
    const dir = fixtureWithScope('notes:reed');
    const out = path.join(tmp.dir, `out-${Math.random().toString(36).slice(2)}`);
    const run = spawnSync(process.execPath, ['bin/svc.js', 'generate', '--contract', dir, '--out', out], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    const file = path.join(dir, 'svc.yaml');
    expect(run.stderr).toContain(
      `${displayPath(file)}:${lineOf(file, 'scope: notes:reed')}:10 error [unknown-scope] personalData.scope "notes:reed" is not declared in svc.yaml. Did you mean notes:read?`,
    );
  });
});
