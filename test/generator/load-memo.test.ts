// In a watcher (session.longLived), loadContract parses a file again only when its text changed (svc
// generate --watch re-reads every file on each change): untouched files keep their parse, an edited
// one is parsed anew, a broken one reports its error on every load, and a removed one is forgotten.
// Any other process parses every file each time (it keeps nothing).
import { describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadContract } from '../../generator/load.ts';
import { session } from '../../generator/session.ts';
import { ContractCopy } from './helpers.ts';

describe('loading a contract again', () => {
  it('keeps nothing outside a watcher', () => {
    const copy = new ContractCopy();
    try {
      expect(session.longLived).toBe(false);
      expect(loadContract(copy.dir).familyFiles[0]).not.toBe(loadContract(copy.dir).familyFiles[0]);
    } finally {
      copy.cleanup();
    }
  });

  it('re-parses only what changed in a watcher', () => {
    const copy = new ContractCopy();
    session.longLived = true;
    try {
      const first = loadContract(copy.dir);
      const second = loadContract(copy.dir);
      expect(second.familyFiles.map((f) => f)).toEqual(first.familyFiles);
      second.familyFiles.forEach((f, i) => expect(f).toBe(first.familyFiles[i]));

      const tasks = path.join(copy.dir, 'families', 'tasks.yaml');
      copy.mutate('families/tasks.yaml', '', 'Work items', 'Work items (edited)');
      const third = loadContract(copy.dir);
      const index = third.familyFiles.findIndex((f) => f.file.endsWith('families/tasks.yaml'));
      expect(third.familyFiles[index]).not.toBe(first.familyFiles[index]);
      expect(JSON.stringify(third.familyFiles[index]!.data)).toContain('Work items (edited)');
      third.familyFiles.forEach((f, i) => i !== index && expect(f).toBe(first.familyFiles[i]));

      writeFileSync(tasks, 'family: tasks\noperations: [\n');
      expect(loadContract(copy.dir).diagnostics).toHaveLength(1);
      expect(loadContract(copy.dir).diagnostics).toHaveLength(1);

      rmSync(tasks);
      expect(loadContract(copy.dir).familyFiles.some((f) => f.file.endsWith('families/tasks.yaml'))).toBe(false);
    } finally {
      session.longLived = false;
      copy.cleanup();
    }
  });
});
