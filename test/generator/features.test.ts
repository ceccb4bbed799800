// svc.yaml `features` (docs/decisions.md, "Features a contract turns on"): client tenancy and
// approvals are off unless a contract turns them on. A principal or a Tier 2/3 command that needs a
// feature the contract leaves off is refused where it is written, with the fix; turned on, the same
// contract compiles, and the generated facts carry the features the runtime reads.
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileWithModel } from '../../generator/generate.ts';
import { displayPath } from '../../generator/load.ts';
import { tempDir } from './helpers.ts';

const FIXTURE = 'test/fixtures/minimal-contract';
const tmp = tempDir('features');
afterAll(() => tmp.cleanup());

/** A copy of the minimal contract with replacements in one file; its directory. */
function fixtureWith(edits: [file: string, from: string, to: string][]): string {
  const dir = path.join(tmp.dir, `contract-${Math.random().toString(36).slice(2)}`);
  cpSync(FIXTURE, dir, { recursive: true });
  for (const [name, from, to] of edits) {
    const file = path.join(dir, name);
    const text = readFileSync(file, 'utf8');
    if (!text.includes(from)) throw new Error(`${JSON.stringify(from)} not in ${name}`);
    writeFileSync(file, text.replace(from, to));
  }
  return dir;
}

function generate(dir: string) {
  return spawnSync(process.execPath, ['bin/svc.js', 'generate', '--contract', dir, '--out', path.join(tmp.dir, `out-${Math.random().toString(36).slice(2)}`)], { encoding: 'utf8' });
}

const lineOf = (file: string, needle: string) => readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(needle)) + 1;

const CLIENT_ADMIN: [string, string, string] = ['svc.yaml', 'principals:\n', 'principals:\n  - { name: client_admin, description: An administrator of one client. }\n'];
const TIER_2: [string, string, string] = ['families/notes.yaml', '    kind: command\n    tier: 1\n', '    kind: command\n    tier: 2\n    subject: { none: "A note belongs to no client." }\n'];

describe('features a contract turns on', () => {
  it('are both off when svc.yaml says nothing (the minimal contract)', async () => {
    const { model } = await compileWithModel(FIXTURE);
    expect(model.service.features).toEqual({ clientTenancy: false, approvals: false });
  });

  it('refuse a client principal without client tenancy, where it is written', () => {
    const dir = fixtureWith([CLIENT_ADMIN]);
    const run = generate(dir);
    expect(run.status).toBe(1);
    const file = path.join(dir, 'svc.yaml');
    expect(run.stderr).toContain(
      `${displayPath(file)}:${lineOf(file, 'name: client_admin')}:13 error [feature-off] Principal client_admin belongs to client tenancy, which this contract does not turn on. Add features: { clientTenancy: true } to svc.yaml`,
    );
  });

  it('refuse a Tier 2 command without approvals, at its tier', () => {
    const dir = fixtureWith([TIER_2]);
    const run = generate(dir);
    expect(run.status).toBe(1);
    const file = path.join(dir, 'families/notes.yaml');
    expect(run.stderr).toContain(`${displayPath(file)}:${lineOf(file, 'tier: 2')}:11 error [feature-off] notes.create is Tier 2, so it would become a proposal, but this contract does not turn approvals on.`);
  });

  it('compile the same contract once svc.yaml turns them on, and carry them in the generated facts', async () => {
    const dir = fixtureWith([CLIENT_ADMIN, TIER_2, ['svc.yaml', 'scopes:\n', 'features: { clientTenancy: true, approvals: true }\n\nscopes:\n']]);
    const { model } = await compileWithModel(dir);
    expect(model.service.features).toEqual({ clientTenancy: true, approvals: true });
    expect(model.service.principals).toContain('client_admin');
  });
});

describe("the Platform API's contract", () => {
  it('turns both on', async () => {
    const { model } = await compileWithModel('contract');
    expect(model.service.features).toEqual({ clientTenancy: true, approvals: true });
  });
});
