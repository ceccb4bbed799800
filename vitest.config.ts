import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Generator tests compile the whole contract (and run tsx/redocly-free); runtime tests start servers.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Databases migrated once per run and copied by every test (test/support/prepared.ts).
    globalSetup: ['test/support/global-setup.ts'],
    // Every handler result is checked against its operation's output schema (runtime/pipeline/executor.ts).
    env: { SVC_VALIDATE_RESPONSES: 'true' },
  },
});
