// Named prepared statements, where the connection keeps them (docs/writes.md "One round trip a statement").
//
// drizzle-orm passes `prepare: false` to postgres.js for every query it was not given a name for
// (`{ prepare: name !== undefined }`), and postgres.js names a statement only when both its client's
// `prepare` option and the query's are on: so client.ts sets the client's and this proxy the query's. An unnamed
// statement with parameters costs two round trips in postgres.js (Parse+Describe, wait for the
// parameter types, then Bind+Execute) and PostgreSQL parses and plans it every time. A named one is
// parsed once per connection and costs one round trip after that (postgres.js keeps the names per
// connection, keyed by the SQL text and parameter types).
//
// Named statements live in the server session, so they are safe only where a connection is a session
// of its own: PostgreSQL itself, PgBouncer in session mode, or a pooler that maps protocol-level
// prepared statements (PgBouncer 1.21+ with max_prepared_statements). Never behind PgBouncer 1.18 in
// transaction mode: the next transaction may get another server connection, where the name means
// another statement or nothing. runtime/data/client.ts decides (SVC_DB_PREPARED_STATEMENTS).
import { wrapStatements } from './wrap-statements.ts';

export type PreparedStatementsSetting = 'auto' | 'on' | 'off';

/**
 * (runtime/data/client.ts names its statements in the observer's layer, `observedStatements(c, true)`,
 * one proxy fewer; this stands alone.)
 * The same postgres.js client, with `prepare` forced to `on` on every statement it or any of its
 * transactions (and savepoints) sends; the client itself when `on` is false.
 */
export function preparedStatements<C extends object>(original: C, on: boolean): C {
  return on ? wrapStatements(original, (sql, query, params, options) => sql.unsafe(query, params, { ...options, prepare: true })) : original;
}

/** Reads SVC_DB_PREPARED_STATEMENTS: auto (default: on for a session connection), on, off. */
export function preparedStatementsFrom(env: Record<string, string | undefined>): PreparedStatementsSetting {
  const raw = (env.SVC_DB_PREPARED_STATEMENTS ?? '').trim().toLowerCase();
  if (raw === '') return 'auto';
  if (raw === 'auto' || raw === 'on' || raw === 'off') return raw;
  throw new Error(`SVC_DB_PREPARED_STATEMENTS must be auto, on or off; got "${env.SVC_DB_PREPARED_STATEMENTS}"`);
}

/** Whether statements are named: `on`/`off` as set; `auto` on a session connection only. */
export function usePreparedStatements(setting: PreparedStatementsSetting, sessionConnection: boolean): boolean {
  return setting === 'on' || (setting === 'auto' && sessionConnection);
}
