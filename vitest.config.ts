import { configDefaults, defineConfig } from 'vitest/config';
import { passFiles, serialFiles, type Pass } from './test/passes.ts';
import LongestFirst from './test/support/sequencer.ts';

// Which files run (SVC_TEST_PASS: all, postgres, node24) and which of them run alone: test/passes.ts,
// docs/testing.md. Two projects of one run: `parallel` first, WORKERS files at a time (most files wait
// on sockets, child processes and databases), then `serial`, one file at a time with nothing else
// running, so that no time bound in those files competes with another file for the two cores.
const pass = (process.env.SVC_TEST_PASS ?? 'all') as Pass;
if (!['all', 'postgres', 'node24'].includes(pass)) throw new Error(`SVC_TEST_PASS=${pass}: expected all, postgres or node24`);
if (pass === 'postgres' && !process.env.DATABASE_URL) throw new Error('the PostgreSQL pass (npm run test:db) needs DATABASE_URL: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run test:db');
const files = passFiles(pass);
const serial = serialFiles(Boolean(process.env.DATABASE_URL));
// Measured on the 2-core machines (docs/testing.md); SVC_TEST_WORKERS overrides it.
const WORKERS = Number(process.env.SVC_TEST_WORKERS ?? 3);

const shared = {
  // Generator tests compile the whole contract (and run tsx/redocly-free); runtime tests start servers.
  // Twice what a file alone needs at most: parallel files share the two cores, and a hook that opens
  // several databases waits its turn for the CPU.
  testTimeout: 120_000,
  hookTimeout: 120_000,
  pool: 'forks' as const,
  // The contract the runtime's leaf functions read (runtime/contract-facts.ts), installed as svc serve does.
  setupFiles: ['test/support/contract-facts.ts'],
  // Every handler result is checked against its operation's output schema (runtime/pipeline/executor.ts).
  env: { SVC_VALIDATE_RESPONSES: 'true' },
};

// Per-file durations for .ci/run (scripts/ci-report.mjs prints them) when SVC_TEST_TIMINGS names a file.
const reporters = process.env.SVC_TEST_TIMINGS ? ['default', './scripts/vitest-timings.ts'] : ['default'];

export default defineConfig({
  test: {
    ...shared,
    reporters,
    // Longest files first (test/durations.json), so the workers finish together.
    sequence: { sequencer: LongestFirst },
    // Databases migrated once per run and copied by every test (test/support/prepared.ts). A globalSetup
    // belongs here, at the root: it runs once (the projects below do not extend the root, so they do not
    // run it again).
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'parallel',
          include: files,
          exclude: [...configDefaults.exclude, ...serial],
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'serial',
          include: files.includes('test/**/*.test.ts') ? serial : serial.filter((f) => files.includes(f)),
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
