// svc release and svc diff as the CLI runs them: snapshots, --against, --base <git-ref>, exit codes.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDiff } from '../../generator/diff/command.ts';
import { buildSnapshot, releaseFiles, runRelease, stableJson } from '../../generator/snapshot.ts';
import { loadContract } from '../../generator/load.ts';
import { applyEdits, cleanupCopies, copyContract, loc } from './helpers.ts';

afterAll(cleanupCopies);

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err, text: () => [...out, ...err].join('\n') };
}

const addColor = {
  'families/notes.yaml': [['        reason: { type: string, maxLength: 500 }\n', '        reason: { type: string, maxLength: 500 }\n        color: { type: string }\n']] as [string, string][],
};

describe('svc release', () => {
  it('writes a deterministic snapshot and refuses to overwrite a different one of the same version', async () => {
    const dir = copyContract();
    const c = capture();
    expect(await runRelease(['--contract', dir], c.io)).toBe(0);
    const file = path.join(dir, 'releases', '1.0.0.json');
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(stableJson(buildSnapshot(loadContract(dir))));
    const snap = JSON.parse(text);
    expect(Object.keys(snap.operations)).toEqual([...Object.keys(snap.operations)].sort());
    expect(snap.service.scopes).toHaveLength(32);
    expect(snap.enums.NoteVisibility).toEqual({ openness: 'closed', values: ['private', 'team', 'client'] });
    expect(snap.operations['notes.create'].def.mcp.annotations.destructiveHint).toBe(false);

    expect(await runRelease(['--contract', dir], c.io)).toBe(0);
    expect(c.text()).toContain('already records contract 1.0.0; nothing to do');

    applyEdits(dir, addColor);
    const c2 = capture();
    expect(await runRelease(['--contract', dir], c2.io)).toBe(1);
    expect(c2.text()).toContain('already records a different contract 1.0.0');
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('--correct replaces a snapshot only when the changelog lists the corrections', async () => {
    const dir = copyContract();
    expect(await runRelease(['--contract', dir], capture().io)).toBe(0);
    const file = path.join(dir, 'releases', '1.0.0.json');
    const before = readFileSync(file, 'utf8');
    applyEdits(dir, addColor);
    const refused = capture();
    expect(await runRelease(['--contract', dir, '--correct'], refused.io)).toBe(1);
    expect(refused.text()).toContain('only when the changelog entry of 1.0.0 lists the corrections under corrected:');
    expect(readFileSync(file, 'utf8')).toBe(before);

    applyEdits(dir, { 'svc.yaml': [['    removed: []\n', '    removed: []\n    corrected: [A note input takes a color.]\n']] });
    const c = capture();
    expect(await runRelease(['--contract', dir, '--correct'], c.io)).toBe(0);
    expect(c.text()).toContain('1.0.0.json in place (1 correction(s) listed in the changelog of 1.0.0)');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toBe(before);
    expect(text).toContain('"color"');
    const snap = JSON.parse(text);
    expect(snap.changelog[0].corrected).toEqual(['A note input takes a color.']);
  });

  it('needs a changelog entry for the version it records', async () => {
    const dir = copyContract();
    applyEdits(dir, { 'svc.yaml': [['  version: 1.0.0', '  version: 1.1.0']] });
    const c = capture();
    expect(await runRelease(['--contract', dir], c.io)).toBe(1);
    expect(c.text()).toContain('no changelog entry for 1.1.0');
  });
});

describe('svc diff', () => {
  it('defaults to the newest release snapshot; removals point into the snapshot', async () => {
    const dir = copyContract();
    await runRelease(['--contract', dir], capture().io);
    // A second, older-looking file must not be chosen.
    writeFileSync(path.join(dir, 'releases', '0.9.0.json'), '{}');
    expect(releaseFiles(path.join(dir, 'releases')).map((r) => r.version)).toEqual(['1.0.0', '0.9.0']);
    const same = capture();
    expect(await runDiff(['--contract', dir], same.io)).toBe(0);
    expect(same.out).toHaveLength(1);
    expect(same.out[0]).toMatch(/^svc diff: no contract changes against .*1\.0\.0\.json \(1\.0\.0\); head is 1\.0\.0\.$/);

    applyEdits(dir, { 'families/notes.yaml': [['        reason: { type: string, maxLength: 500 }\n', '']] });
    const c = capture();
    expect(await runDiff(['--contract', dir], c.io)).toBe(1);
    const snapshotFile = path.join(dir, 'releases', '1.0.0.json');
    const line = c.err.find((l) => l.includes('[input-field-removed]'))!;
    expect(line).toContain('breaking [input-field-removed] notes.archive');
    // The location is the removed field's key inside the snapshot JSON.
    const [, lineNo] = /\.json:(\d+):\d+ /.exec(line)!;
    expect(readFileSync(snapshotFile, 'utf8').split('\n')[Number(lineNo) - 1]).toContain('"reason": {');
    expect(c.text()).toContain('/v2 beside');
  });

  it('--against a snapshot: an additive change needs the minor raised and a changelog entry', async () => {
    const dir = copyContract();
    await runRelease(['--contract', dir], capture().io);
    const snapshot = path.join(dir, 'releases', '1.0.0.json');
    applyEdits(dir, addColor);
    const c = capture();
    expect(await runDiff(['--contract', dir, '--against', snapshot], c.io)).toBe(1);
    expect(c.text()).toContain(`${loc(dir, 'families/notes.yaml', 'color:')} additive [input-field-added] notes.archive`);
    expect(c.text()).toContain('Set info.version: 1.1.0');

    applyEdits(dir, {
      'svc.yaml': [
        ['  version: 1.0.0', '  version: 1.1.0'],
        ['changelog:\n', 'changelog:\n  - version: 1.1.0\n    date: "2026-12-01"\n    added: [notes.archive takes an optional color.]\n    deprecated: []\n    removed: []\n'],
      ],
    });
    const ok = capture();
    expect(await runDiff(['--contract', dir, '--against', snapshot], ok.io)).toBe(0);
    expect(ok.out.at(-1)).toMatch(/1 additive change\(s\).*1\.1\.0 raises the minor/);
    // ... and it can then be released.
    expect(await runRelease(['--contract', dir], capture().io)).toBe(0);
    expect(existsSync(path.join(dir, 'releases', '1.1.0.json'))).toBe(true);
  });

  it('--base <git-ref> compiles the contract as committed at that ref', async () => {
    const repo = copyContract();
    const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' } });
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'base');
    applyEdits(repo, { 'schemas/notes.yaml': [['maxLength: 5000', 'maxLength: 2000']] });
    const c = capture();
    expect(await runDiff(['--contract', repo, '--base', 'HEAD'], c.io)).toBe(1);
    expect(c.text()).toContain(`${loc(repo, 'schemas/notes.yaml', 'maxLength: 2000')} breaking [input-length-narrowed] NoteBase`);
    // A removal points at the base: <ref>:<path>:line:col.
    applyEdits(repo, { 'families/notes.yaml': [['        reason: { type: string, maxLength: 500 }\n', '']] });
    const r = capture();
    expect(await runDiff(['--contract', repo, '--base', 'HEAD'], r.io)).toBe(1);
    expect(r.text()).toMatch(/HEAD:families\/notes\.yaml:\d+:9 breaking \[input-field-removed\] notes\.archive/);
  });
});
