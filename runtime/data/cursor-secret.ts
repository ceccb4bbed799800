// The cursor signing secret: SVC_CURSOR_SECRET when set, else a random per-database secret kept in
// the settings table (created at open by client.ts, or on first use by paging.ts). A leaf, so the
// database client can create it without importing paging.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from './db-types.ts';
import { settings } from './schema.ts';

export const CURSOR_SECRET_SETTING = 'cursor_secret';

/**
 * The per-database secret once read, by database handle: it is written once (insert, never updated)
 * and never changes, so a list page costs no round trip for it. A transaction's handle is a new
 * object each time and reads it again.
 */
const secretsByDb = new WeakMap<object, string>();

export async function cursorSecret(db: Db): Promise<string> {
  const fromEnv = process.env.SVC_CURSOR_SECRET;
  if (fromEnv) return fromEnv;
  const cached = secretsByDb.get(db);
  if (cached !== undefined) return cached;
  let found = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, CURSOR_SECRET_SETTING));
  if (!found[0]) {
    await ensureCursorSecret(db);
    found = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, CURSOR_SECRET_SETTING));
  }
  secretsByDb.set(db, found[0].value);
  return found[0].value;
}

/** Creates the per-database cursor secret if it does not exist yet (safe to call concurrently). */
export async function ensureCursorSecret(db: Db): Promise<void> {
  await db
    .insert(settings)
    .values({ key: CURSOR_SECRET_SETTING, value: randomBytes(32).toString('base64url') })
    .onConflictDoNothing({ target: settings.key });
}
