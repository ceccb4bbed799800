import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Generator tests compile the whole contract (and run tsx/redocly-free); runtime tests start servers.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
