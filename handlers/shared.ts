// Small helpers the handler families share.
import { eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../runtime/data/client.ts';
import { tableStatement } from '../runtime/data/statement.ts';
import { clients, users } from '../runtime/data/schema.ts';
import { etagMatches, requireIfMatch } from '../runtime/pipeline/etag.ts';
import type { HandlerContext } from '../runtime/handler-types.ts';
import { invalidField, notFound, ProblemError, type FieldError } from '../runtime/problem-error.ts';

/** 428 without If-Match, 412 when it does not match the current ETag (strong comparison). */
/** If-Match against the resource's current ETag: 428 when missing (runtime/pipeline/etag.ts requireIfMatch, the one rule), 412 when stale. */
export function checkIfMatch(ctx: HandlerContext, currentEtag: string): void {
  const ifMatch = requireIfMatch(ctx.operationId, ctx.ifMatch);
  if (!etagMatches(ifMatch, currentEtag)) throw preconditionFailed(currentEtag);
}

export function preconditionFailed(currentEtag?: string): ProblemError {
  return new ProblemError(
    'precondition_failed',
    'The resource changed since the ETag you sent was issued; read it again and retry with the new ETag.',
    currentEtag ? { extra: { currentEtag } } : {},
  );
}

export function invalidTransition(detail: string): ProblemError {
  return new ProblemError('invalid_transition', detail);
}

export { validationFailed } from '../runtime/problem-error.ts';

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date YYYY-MM-DD that exists (2026-02-30 does not); validation_failed otherwise. */
export function checkDate(value: string | null | undefined, pointer: string): string | null {
  if (value === null || value === undefined) return null;
  const m = DATE_RE.exec(value);
  if (m) {
    // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
    const d = new Date(0);
    d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    if (d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])) {
      return value;
    }
  }
  throw invalidField(pointer, 'must be a calendar date (YYYY-MM-DD)');
}

/** The client row, or 404 when it does not exist. (Scope is checked by the caller through Policy.) */
const clientById = tableStatement('client_by_id', clients, (db) => db.select().from(clients).where(eq(clients.id, sql.placeholder('id') as never)));

export async function requireClient(db: Db, clientId: string): Promise<typeof clients.$inferSelect> {
  // Built once: every task, project and CRM write in a client reads it (docs/writes.md).
  const [row] = await clientById.run(db, { id: clientId });
  if (!row) throw notFound('Client');
  return row;
}

/** Field errors for user ids that do not name an active user. */
export async function unknownUsers(db: Db, ids: { pointer: string; id: string }[]): Promise<FieldError[]> {
  if (ids.length === 0) return [];
  const found = await db
    .select({ id: users.id, disabledAt: users.disabledAt })
    .from(users)
    .where(inArray(users.id, [...new Set(ids.map((i) => i.id))]));
  const active = new Set(found.filter((u) => u.disabledAt === null).map((u) => u.id));
  return ids.filter((i) => !active.has(i.id)).map((i) => ({ pointer: i.pointer, message: `no user ${i.id}` }));
}

/** The acting user's display name, for comment authors (null when unknown). */
export async function actorName(db: Db, userId: string): Promise<string | null> {
  const [row] = await db.select({ name: users.name }).from(users).where(eq(users.id, userId));
  return row?.name ?? null;
}
