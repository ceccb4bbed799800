// The last statement of a write (one round trip): its stored answer's UPDATE, and the audit row's
// INSERT when auditing is on, as data-modifying CTEs; built once (runtime/data/statement.ts). It finds
// no claim (0 rows) when the key's claim is no longer this request's.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../data/client.ts';
import { statement } from '../data/statement.ts';
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

const withAudit = statement<{ n: number }>('svc_complete_write_audited', (db) => {
  const audit = db.insert(auditLog).values(Object.fromEntries(AUDIT_COLUMNS.map((c) => [c, p(`audit_${c}`)])) as never);
  return sql`with d as ${storedAnswer(db)}, a as ${audit} select count(*)::int as n from d`;
});
const alone = statement<{ n: number }>('svc_complete_write', (db) => sql`with d as ${storedAnswer(db)} select count(*)::int as n from d`);

/** Stores the answer (and writes the audit row); false when the claim is no longer `holder`'s. */
export async function completeWrite(tx: Db, s: IdempotencyScope, holder: string, response: StoredResponse, audit: AuditValues | null): Promise<boolean> {
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
  const [row] = await (audit ? withAudit : alone).run(tx, values);
  return Number(row?.n ?? 0) > 0;
}
