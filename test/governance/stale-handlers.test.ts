// Handlers kept in step with the contract (issue 30): a renamed operation leaves a stale handler
// entry, which `svc generate` reports (and --prune deletes) and `svc lint` fails on; the scaffold's
// notImplemented import stands only while a stub uses it.
import { afterAll, describe, expect, it } from 'vitest';
import { ProjectCopy } from '../support/project-copy.ts';

const project = new ProjectCopy();
afterAll(() => project.cleanup());

const H = 'handlers/tasks.ts';
const IMPORT = "import { notImplemented } from '../runtime/pipeline/not-implemented.ts';";

describe('renaming tasks.get to tasks.fetch', () => {
  it('svc generate scaffolds the new entry and warns about the old one, saying what to delete', () => {
    const { line, col } = project.lineCol(H, "'tasks.get': get,");
    expect(project.read(H)).not.toContain(IMPORT);
    project.edit('contract/families/tasks.yaml', 'id: tasks.get', 'id: tasks.fetch');
    const run = project.svc('generate');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('scaffold handlers/tasks.ts: added tasks.fetch (answer 501 until written)');
    expect(run.stderr).toContain(
      `warning: handlers/tasks.ts:${line}:${col} handles tasks.get, which the contract no longer has (removed or renamed). If it was renamed to tasks.fetch, move its body into that entry first. Delete the entry (line ${line}), or run \`npx svc generate --prune\` to delete it.`,
    );
    // The stub brought its import.
    expect(project.read(H)).toContain(IMPORT);
    expect(project.read(H)).toContain("'tasks.fetch': notImplemented('tasks.fetch'),");
  }, 180_000);

  it('svc lint fails on the stale entry', () => {
    const { line, col } = project.lineCol(H, "'tasks.get': get,");
    const run = project.svc('lint');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`handler stale: handlers/tasks.ts:${line}:${col} handles tasks.get, which the contract no longer has (removed or renamed).`);
    expect(run.stderr).toMatch(/svc lint: \d+ operation\(s\) not implemented, 1 stale handler entry\./);
  }, 180_000);

  it('once the body moves to the new entry, svc generate --prune deletes the old one and the unused import', () => {
    project.edit(H, "'tasks.fetch': notImplemented('tasks.fetch'),", "'tasks.fetch': get,");
    const run = project.svc('generate', '--prune');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('scaffold handlers/tasks.ts: deleted the stale entry tasks.get');
    expect(run.stdout).toContain('scaffold handlers/tasks.ts: removed the notImplemented import (no stub left)');
    expect(run.stderr).not.toContain('warning:');
    const text = project.read(H);
    expect(text).not.toContain("'tasks.get'");
    expect(text).not.toContain(IMPORT);
    expect(text).toContain("'tasks.fetch': get,");
    const lint = project.svc('lint');
    expect(lint.stderr).not.toContain('handler stale');
    expect(lint.status, lint.stderr).toBe(0);
  }, 180_000);
});
