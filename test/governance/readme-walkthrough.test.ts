// The contract author's walkthrough of the README, run on a copy of the project (issue 30): the
// operation, field and changelog entry it shows are added, the commands it names are run, and what
// they print must be what the README shows. The versions are read from the contract, never assumed.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { blocks, runWalkthrough, sampleMatches, staleVersions, WALKTHROUGH_DOC, type WalkthroughRun } from '../../scripts/readme-walkthrough.ts';

const REFRESH = `run \`node --import tsx scripts/readme-walkthrough.ts --write\` to refresh ${WALKTHROUGH_DOC}'s samples from the real output (then read the diff)`;
const doc = readFileSync(WALKTHROUGH_DOC, 'utf8');
let run: WalkthroughRun;

beforeAll(() => {
  run = runWalkthrough(doc);
}, 600_000);

describe(`${WALKTHROUGH_DOC}: the contract author's walkthrough`, () => {
  it('has every input and sample it needs', () => {
    expect([...blocks(doc).keys()].sort()).toEqual(['changelog', 'diff-additive', 'diff-ok', 'field', 'generate-ok', 'generate-slip', 'generate-totals', 'operation', 'release']);
  });

  it('adding an operation: svc generate refuses the totals, then reports a slip at its place, then writes and scaffolds', () => {
    expect(run.status.get('generate-totals')).toBe(1);
    expect(run.outputs.get('generate-totals')).toMatch(/\[totals\] totals\.operations declares \d+ but the contract has \d+\./);
    expect(run.status.get('generate-slip')).toBe(1);
    expect(run.outputs.get('generate-slip')).toMatch(/tasks\.archive's audience is the string "operator", but it must be a list\./);
    expect(run.status.get('generate-ok')).toBe(0);
    expect(run.outputs.get('generate-ok')).toContain('scaffold handlers/tasks.ts: added tasks.archive (answer 501 until written)');
  });

  it('the life of a change: svc diff wants the next minor and a changelog entry, then passes, then svc release records it', () => {
    expect(run.status.get('diff-additive')).toBe(1);
    expect(run.outputs.get('diff-additive')).toContain(`says ${run.version}, which does not raise the minor over ${run.version}. Set info.version: ${run.next}.`);
    expect(run.status.get('diff-ok')).toBe(0);
    expect(run.status.get('release')).toBe(0);
    expect(run.outputs.get('release')).toContain(`contract/releases/${run.next}.json`);
  });

  it("every sample output is what the command prints today", () => {
    const differing = [...blocks(doc).values()]
      .filter((b) => run.outputs.has(b.name) && !sampleMatches(b.text, run.outputs.get(b.name)!))
      .map((b) => `--- ${b.name} in ${WALKTHROUGH_DOC}:\n${b.text}\n--- what it prints:\n${run.outputs.get(b.name)}`);
    expect(differing, `${REFRESH}\n${differing.join('\n')}`).toEqual([]);
  });

  it("names only the contract's version and the next minor", () => {
    expect(staleVersions(doc, run.version, run.next), `the contract is at ${run.version} (next minor ${run.next}): ${REFRESH}`).toEqual([]);
  });
});

describe('sample matching', () => {
  it('reads ... as any lines and dates as any date, and nothing else loosely', () => {
    expect(sampleMatches('a\n...\nd', 'a\nb\nc\nd')).toBe(true);
    expect(sampleMatches('a\n...\nd', 'a\nd')).toBe(true);
    expect(sampleMatches('a\nd', 'a\nb\nd')).toBe(false);
    expect(sampleMatches('date: "2026-12-01"', 'date: "2027-01-31"')).toBe(true);
    expect(sampleMatches('says 1.1.0', 'says 1.2.0')).toBe(false);
  });
});
