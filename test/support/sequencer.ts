// The order files start in (vitest.config.ts sequence.sequencer): the longest first, so that a few
// workers finish together instead of one running a long file alone at the end. Vitest orders by the
// durations of the last run on this machine (node_modules/.vite), which a clean clone does not have,
// and otherwise by file size; test/durations.json holds each file's seconds from a measured run
// (scripts/ci-report.mjs --durations writes it), per engine. A file it does not know goes first, as
// vitest runs unknown files first. Only the order depends on it: a stale table costs time, never a result.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

type Table = Record<string, number>;
const durations = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8')) as { pglite: Table; postgres: Table };

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const table = process.env.DATABASE_URL ? durations.postgres : durations.pglite;
    const seconds = (s: TestSpecification) => table[relative(s.project.config.root, s.moduleId)] ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      if (a.project.name !== b.project.name) return a.project.name < b.project.name ? -1 : 1;
      const sa = seconds(a);
      const sb = seconds(b);
      return sa === sb ? 0 : sb > sa ? 1 : -1;
    });
  }
}
