// The connections of a test's PostgreSQL database that sit idle inside a transaction begun more than
// `olderThanMs` ago: what a transaction held across network I/O looks like in pg_stat_activity. A
// short transaction is idle between its own statements for a moment, so a single look must not count
// those: only the ones that have lasted.
import type { Database } from '../../runtime/data/client.ts';

export async function longIdleTransactions(database: Database, olderThanMs = 1_000): Promise<Record<string, unknown>[]> {
  if (database.kind !== 'postgres') return [];
  return database.execute(
    `select pid, application_name, state, left(query, 200) as query, now() - xact_start as open_for from pg_stat_activity
      where datname = current_database() and state like 'idle in transaction%' and now() - xact_start > interval '${Math.trunc(olderThanMs)} milliseconds'`,
  );
}
