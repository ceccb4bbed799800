// The database handle's types, a leaf: client.ts re-exports them; the modules client.ts imports take
// them from here (the cursor secret, cursor-secret.ts), so none imports client.ts back.
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema.ts';

export type Schema = typeof schema;

/**
 * A drizzle database or transaction, whichever driver. A transaction (`tx` inside
 * `db.transaction(async (tx) => …)`) is a PgTransaction, which extends PgDatabase, so it is a Db too.
 */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export type Row = Record<string, unknown>;
