// Statements built once. drizzle-orm builds a query's SQL text anew on every call (walking the
// builder's tree, checking every chunk's kind): for the few statements every write runs (the claim,
// the event row, the stored answer with its audit row) that was a sixth of a write's CPU under load
// (docs/writes.md). A Statement is written with drizzle's builders and `sql.placeholder(name)` for
// every value, compiled to text and parameters the first time it runs, and then only has its
// placeholders filled (drizzle's own prepared-query path, on the transaction's session, so it runs
// inside the caller's transaction). On a session connection the text is also a named prepared
// statement on the server (runtime/data/prepared-statements.ts).
import { getTableColumns, type Query, type SQL, type SQLWrapper, type Table } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { rowsOf } from './client.ts';
import type { Db, Row } from './db-types.ts';

const dialect = new PgDialect();

export interface Statement<R extends Row = Row> {
  /** Runs on `db` (a transaction or the pool) with a value for every placeholder. */
  run(db: Db, values: Record<string, unknown>): Promise<R[]>;
}

/**
 * `name` identifies the statement (drizzle then asks postgres.js to prepare it; the driver names it
 * only where runtime/data/client.ts allows). `build` is called once, with the first db it runs on.
 */
export function statement<R extends Row = Row>(name: string, build: (db: Db) => SQL | SQLWrapper): Statement<R> {
  let query: Query | null = null;
  return {
    async run(db, values) {
      query ??= dialect.sqlToQuery(build(db).getSQL());
      const prepared = db._.session.prepareQuery(query, undefined, name, false);
      return rowsOf<R>(await prepared.execute(values));
    },
  };
}

/**
 * A statement whose rows are `table`'s whole rows (`returning()` or `select *`), handed back as drizzle
 * returns them: keyed by the table's property names, each value decoded by its column.
 */
export function tableStatement<T extends Table>(name: string, table: T, build: (db: Db) => SQL | SQLWrapper): Statement<T['$inferSelect']> {
  const raw = statement(name, build);
  const columns = Object.entries(getTableColumns(table));
  return {
    async run(db, values) {
      return (await raw.run(db, values)).map((row) => {
        const out: Row = {};
        for (const [key, column] of columns) {
          const value = row[column.name];
          out[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
        }
        return out as T['$inferSelect'];
      });
    },
  };
}
