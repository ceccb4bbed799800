// `svc diff` over the dynamic MCP mode's meta-tools (svc.yaml mcpDynamic): adding them is additive;
// removing or renaming one, changing its role or annotations, or narrowing its input is breaking.
// Each finding carries its rule, subject and file:line:col, in a contract or in a release snapshot.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verdict } from '../../generator/diff/command.ts';
import { diffContracts } from '../../generator/diff/engine.ts';
import { RULES, type Finding } from '../../generator/diff/rules.ts';
import { compileContract, snapshotSide, stableJson } from '../../generator/snapshot.ts';
import { displayPath } from '../../generator/load.ts';
import { cleanupCopies, FIXTURE, loc, mutate, type Edits } from './helpers.ts';

afterAll(cleanupCopies);

const SVC = 'svc.yaml';
/** The real contract's mcpDynamic section, as written. */
const SECTION = (() => {
  const text = readFileSync('contract/svc.yaml', 'utf8');
  const start = text.indexOf('\nmcpDynamic:\n');
  const end = text.indexOf('\n\n', start + 1);
  return text.slice(start + 1, end + 1);
})();
const withSection: Edits = { [SVC]: [['mcpProtocolVersions: ["2025-11-25", "2025-06-18", "2025-03-26"]\n', `mcpProtocolVersions: ["2025-11-25", "2025-06-18", "2025-03-26"]\n${SECTION}`]] };

function findings(baseDir: string, headDir: string): Finding[] {
  return diffContracts(compileContract(baseDir), compileContract(headDir));
}

describe('svc diff: the meta-tools of the dynamic mode', () => {
  const base = mutate(withSection);

  it('adding the dynamic mode is additive: one mcp-meta-tool-added per tool, at its name', () => {
    const found = findings(FIXTURE, base);
    expect(found.map((f) => [f.kind, f.rule, f.subject, f.location])).toEqual(
      ['search', 'describe', 'read', 'invoke'].map((r) => ['additive', 'mcp-meta-tool-added', `svc.api.${r}`, loc(base, SVC, `name: svc.api.${r}`)]),
    );
    for (const f of found) expect(RULES[f.rule]!.kind).toBe('additive');
  });

  it('finds nothing between the section and itself, and a wording change of a description is no finding', () => {
    expect(findings(base, base)).toEqual([]);
    const reworded = mutate({ [SVC]: [['Describe a tool', 'Describe one tool']] }, base);
    expect(findings(base, reworded)).toEqual([]);
  });

  it('a renamed meta-tool is breaking (removed, at its old name) beside the addition of the new name', () => {
    const head = mutate({ [SVC]: [['name: svc.api.read', 'name: svc.api.fetch']] }, base);
    const found = findings(base, head);
    expect(found.map((f) => [f.kind, f.rule, f.subject, f.location])).toEqual([
      ['breaking', 'mcp-meta-tool-removed', 'svc.api.read', loc(base, SVC, 'name: svc.api.read')],
      ['additive', 'mcp-meta-tool-added', 'svc.api.fetch', loc(head, SVC, 'name: svc.api.fetch')],
    ]);
    const v = verdict(compileContract(base), compileContract(head), found);
    expect(v.exitCode).toBe(1);
  });

  it('swapped roles are breaking, and so are the annotations that follow them', () => {
    const head = mutate(
      {
        [SVC]: [
          ['role: read', 'role: READ_'],
          ['role: invoke', 'role: read'],
          ['role: READ_', 'role: invoke'],
        ],
      },
      base,
    );
    const rules = findings(base, head).map((f) => `${f.kind} ${f.rule} ${f.subject}`);
    expect(rules).toContain('breaking mcp-meta-tool-role-changed svc.api.read');
    expect(rules).toContain('breaking mcp-meta-tool-role-changed svc.api.invoke');
    expect(rules).toContain('breaking mcp-annotations-changed svc.api.read');
    expect(rules).toContain('breaking mcp-annotations-changed svc.api.invoke');
  });

  it('a narrower input is breaking, at the keyword that narrows it', () => {
    const shorter = mutate({ [SVC]: [['query: { type: string, minLength: 1, maxLength: 200', 'query: { type: string, minLength: 1, maxLength: 100']] }, base);
    expect(findings(base, shorter).map((f) => [f.kind, f.rule, f.subject, f.location])).toEqual([
      ['breaking', 'input-length-narrowed', 'svc.api.search', loc(shorter, SVC, 'maxLength: 100')],
    ]);
    const required = mutate({ [SVC]: [['        required: [tool]\n        properties:\n          tool: { type: string, minLength: 1, maxLength: 64, description: "A tool name from svc.api.search." }', '        required: [tool, arguments]\n        properties:\n          tool: { type: string, minLength: 1, maxLength: 64, description: "A tool name from svc.api.search." }']] }, base);
    const found = findings(base, required);
    expect(found.map((f) => [f.kind, f.rule, f.subject])).toEqual([['breaking', 'input-field-required', 'svc.api.invoke']]);
    expect(found[0]!.message).toContain('svc.api.invoke input.arguments');
  });

  it('compares with a release snapshot, locating a removal in the snapshot file', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-diff-dynamic-'));
    try {
      const file = path.join(dir, '1.0.0.json');
      writeFileSync(file, stableJson(compileContract(base).snapshot));
      const head = mutate({ [SVC]: [['name: svc.api.describe', 'name: svc.api.explain']] }, base);
      const found = diffContracts(snapshotSide(file), compileContract(head));
      const removed = found.find((f) => f.rule === 'mcp-meta-tool-removed')!;
      expect(removed.subject).toBe('svc.api.describe');
      const text = readFileSync(file, 'utf8');
      const at = text.indexOf('"svc.api.describe"');
      const before = text.slice(0, text.lastIndexOf('"name"', at)).split('\n');
      expect(removed.location).toBe(`${displayPath(file)}:${before.length}:${before[before.length - 1]!.length + 1}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
