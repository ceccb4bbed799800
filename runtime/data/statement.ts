// Statements built once. drizzle-orm builds a query's SQL text anew on every call (walking the
// builder's tree, checking every chunk's kind): for the few statements every write runs (the claim,
// the event row, the stored answer with its audit row) that was a sixth of a write's CPU under load
// (docs/writes.md). A Statement is written with drizzle's builders and `sql.placeholder(name)` for
// every value, compiled to text and parameters the first time it runs, and then only has its
// placeholders filled (drizzle's own prepared-query path, on the transaction's session, so it runs
// inside the caller's transaction). On a session connection the text is also a named prepared
// statement on the server (runtime/data/prepared-statements.ts).
import { DrizzleQueryError, getTableColumns, is, Param, Placeholder, type Query, type SQL, type SQLWrapper, type Table } from 'drizzle-orm';
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
  let fill: Filler | null = null;
  return {
    async run(db, values) {
      query ??= dialect.sqlToQuery(build(db).getSQL());
      const client = (db._.session as unknown as { client?: Partial<UnsafeClient> }).client;
      if (typeof client?.unsafe === 'function') return rowsOf<R>(await sendOnPostgresJs(client as UnsafeClient, query, (fill ??= filler(query.params)), values));
      const prepared = db._.session.prepareQuery(query, undefined, name, false);
      return rowsOf<R>(await prepared.execute(values));
    },
  };
}

interface UnsafeClient {
  unsafe(query: string, params: unknown[], options: { prepare: boolean }): PromiseLike<unknown>;
}

/**
 * What drizzle's prepared query does on postgres.js (drizzle-orm 0.45, PostgresJsPreparedQuery.execute
 * with a name, no result fields, no logger, no cache: svc's databases have none), without building a
 * prepared-query object, two tracer calls and the cache's checks per statement (issue 41,
 * docs/writes.md): the placeholders filled through each parameter's encoder (`filler`, below), `prepare: true` (the
 * driver names it only where runtime/data/client.ts allows), and a driver error wrapped the same way,
 * a DrizzleQueryError with the driver's error as its `cause` (the idempotency claim reads
 * `cause.code`). PGlite's session has no `unsafe` and keeps drizzle's path.
 */
async function sendOnPostgresJs(client: UnsafeClient, query: Query, fill: Filler, values: Record<string, unknown>): Promise<unknown> {
  const params = fill(values);
  try {
    return await client.unsafe(query.sql, params, { prepare: true });
  } catch (e) {
    throw new DrizzleQueryError(query.sql, params, e as Error);
  }
}

type Filler = (values: Record<string, unknown>) => unknown[];
type Slot = { name: string; encoder: Param['encoder'] | null } | { value: unknown };

/**
 * drizzle's `fillPlaceholders` for one statement's parameters, each parameter's kind found once
 * (drizzle's `is` walks a class chain for every parameter of every call): a placeholder takes its
 * value, a placeholder bound to a column goes through the column's encoder, anything else stays as
 * it is; a missing value is the same error.
 */
function filler(params: unknown[]): Filler {
  const slots: Slot[] = params.map((p) => {
    if (is(p, Placeholder)) return { name: p.name, encoder: null };
    if (is(p, Param) && is(p.value, Placeholder)) return { name: (p.value as Placeholder).name, encoder: p.encoder };
    return { value: p };
  });
  return (values) =>
    slots.map((slot) => {
      if ('value' in slot) return slot.value;
      if (!(slot.name in values)) throw new Error(`No value for placeholder "${slot.name}" was provided`);
      const value = values[slot.name];
      return slot.encoder ? slot.encoder.mapToDriverValue(value) : value;
    });
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
