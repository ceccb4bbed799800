import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Generator tests compile the whole contract (and run tsx/redocly-free); runtime tests start servers.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Every handler result is checked against its operation's output schema (runtime/pipeline/executor.ts).
    env: { SVC_VALIDATE_RESPONSES: 'true' },
  },
});
