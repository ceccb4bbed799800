// The last statement of a write (one round trip): its stored answer's UPDATE, the audit row's INSERT
// when auditing is on, and the write's event (row and NOTIFY) when it emitted exactly one, as
// data-modifying CTEs; each of the four shapes built once (runtime/data/statement.ts). It finds no
// claim (0 rows) when the key's claim is no longer this request's; the caller then rolls back.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../data/client.ts';
import { statement, type Statement } from '../data/statement.ts';
import { eventCtes, eventPlaceholders, type PendingEvent } from '../events/events.ts';
import { auditLog, idempotencyRecords } from '../data/schema.ts';
import type { IdempotencyScope, StoredResponse } from './idempotency.ts';

const p = (name: string) => sql.placeholder(name);

/** The columns auditRow fills (runtime/pipeline/audit.ts), every one a placeholder of the insert. */
const AUDIT_COLUMNS = [
  'at', 'requestId', 'transport', 'operationId', 'toolName', 'method', 'path', 'principalKind', 'principalId',
  'credentialId', 'loginMethod', 'status', 'outcome', 'problemCode', 'durationMs',
] as const satisfies readonly (keyof typeof auditLog.$inferInsert)[];

type AuditValues = Pick<typeof auditLog.$inferInsert, (typeof AUDIT_COLUMNS)[number]>;

function storedAnswer(db: Db) {
  return db
    .update(idempotencyRecords)
    .set({ state: 'done', holder: null, responseStatus: p('status'), responseBody: p('body'), responseHeaders: p('headers') } as never)
    .where(
      and(
        eq(idempotencyRecords.credentialId, p('credentialId') as never),
        eq(idempotencyRecords.operationId, p('operationId') as never),
        eq(idempotencyRecords.key, p('key') as never),
        eq(idempotencyRecords.holder, p('holder') as never),
        eq(idempotencyRecords.state, 'in_progress'),
      ),
    )
    .returning({ key: idempotencyRecords.key });
}

const shapes = new Map<string, Statement<{ n: number }>>();

/** The statement for this shape (with or without the audit row, with or without one event). */
function completion(audited: boolean, withEvent: boolean): Statement<{ n: number }> {
  const name = `svc_complete_write${audited ? '_audited' : ''}${withEvent ? '_event' : ''}`;
  let made = shapes.get(name);
  if (!made) {
    made = statement<{ n: number }>(name, (db) => {
      const ctes = [sql`d as ${storedAnswer(db)}`];
      if (audited) ctes.push(sql`a as ${db.insert(auditLog).values(Object.fromEntries(AUDIT_COLUMNS.map((c) => [c, p(`audit_${c}`)])) as never)}`);
      if (withEvent) ctes.push(eventCtes(db, 'event_', 'e'));
      const notified = withEvent ? sql`, (select count(*)::int from e_notified) as notified` : sql``;
      return sql`with ${sql.join(ctes, sql`, `)} select (select count(*)::int from d) as n${notified}`;
    });
    shapes.set(name, made);
  }
  return made;
}

/** Stores the answer (and writes the audit row); false when the claim is no longer `holder`'s. */
export async function completeWrite(
  tx: Db,
  s: IdempotencyScope,
  holder: string,
  response: StoredResponse,
  audit: AuditValues | null,
  event: PendingEvent | null,
): Promise<boolean> {
  const values: Record<string, unknown> = {
    status: response.status,
    body: { body: response.body ?? null, ...(response.problem ? { problem: response.problem } : {}) },
    headers: response.headers,
    credentialId: s.credentialId,
    operationId: s.operationId,
    key: s.key,
    holder,
  };
  if (audit) for (const c of AUDIT_COLUMNS) values[`audit_${c}`] = audit[c] ?? null;
  if (event) Object.assign(values, eventPlaceholders(event, 'event_'));
  const [row] = await completion(audit !== null, event !== null).run(tx, values);
  return Number(row?.n ?? 0) > 0;
}
