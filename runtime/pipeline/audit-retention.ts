// Audit retention (SVC_AUDIT_RETENTION_DAYS, default 365; docs/fleet.md "Growth"): audit rows older
// than the retention are deleted by the server's periodic sweep (runtime/app.ts, every 10 minutes,
// with the idempotency sweep), so the audit log is bounded like the events (limits.eventRetentionDays).
//
// The spec's audit rules still hold: every call gets its row (a row is only removed once it is older
// than the retention), and nothing else about a row changes. The retention may not be shorter than
// the events' (30 days): an event in the feed always has the audit row of the call that caused it.
//
// Cost: the sweep walks the oldest rows by primary key (ids follow time), a batch at a time, and
// stops at the first batch with nothing old enough, so it never scans the table (audit_log has no
// index on `at`, and needs none for this).
import { sql } from 'drizzle-orm';
import { executeRows, type Db } from '../data/client.ts';

export const AUDIT_RETENTION_DEFAULT_DAYS = 365;
const BATCH = 5_000; // not a contract limit: rows per delete statement

/**
 * SVC_AUDIT_RETENTION_DAYS -> days, or a message naming the rule: a whole number of days, at least
 * `minDays`. loadConfig knows no contract (1); createApp checks again with the contract's
 * limits.eventRetentionDays, so the audit log is never shorter than the events'.
 */
export function auditRetentionDays(value: string | undefined, minDays = 1): number {
  if (value === undefined || value.trim() === '') return AUDIT_RETENTION_DEFAULT_DAYS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < minDays) {
    throw new Error(`SVC_AUDIT_RETENTION_DAYS must be a whole number of days, at least ${minDays} (the events' retention); got "${value}"`);
  }
  return n;
}

/** Deletes audit rows older than `days` before `now`; returns how many. */
export async function purgeExpiredAudit(db: Db, days: number, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - days * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const rows = await executeRows<{ n: number }>(
      db,
      sql`with oldest as (select id, at from audit_log order by id limit ${BATCH}),
               gone as (delete from audit_log where id in (select id from oldest where at < ${before}::timestamptz) returning 1)
          select count(*)::int as n from gone`,
    );
    const n = Number(rows[0]?.n ?? 0);
    total += n;
    if (n < BATCH) return total;
  }
}
