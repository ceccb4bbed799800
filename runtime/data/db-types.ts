// The database handle's types, a leaf: client.ts re-exports them; the modules client.ts imports take
// them from here (the cursor secret, cursor-secret.ts), so none imports client.ts back.
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema.ts';

export type Schema = typeof schema;

/**
 * A drizzle database or transaction, whichever driver. A transaction (`tx` inside
 * `db.transaction(async (tx) => …)`) is a PgTransaction, which extends PgDatabase, so it is a Db too.
 * Opened without drizzle's relational schema (client.ts): nothing uses `db.query`, and with one, every
 * transaction built a relational query builder for each of the tables (docs/writes.md, issue 41).
 */
export type Db = PgDatabase<PgQueryResultHKT>;

export type Row = Record<string, unknown>;
