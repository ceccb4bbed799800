// vitest globalSetup: the prepared databases (test/support/prepared.ts) are made once, before any
// test file runs, instead of by the first file of each worker at the same time.
import { postgresTemplate, preparePgliteSnapshot } from './prepared.ts';

export default async function setup(): Promise<void> {
  await preparePgliteSnapshot();
  if (process.env.DATABASE_URL) await postgresTemplate(process.env.DATABASE_URL);
}
