// Events retention (limits.eventRetentionDays): deletes only a PREFIX of the published order
// (txid, seq), never an event with a kept one before it, and records the last deleted (txid, seq) as
// the purge boundary (feed.ts PURGED_THROUGH_SETTING). So a position whose event is gone always lies at
// or before the boundary and every kept event after it, and positions resolve exactly (feed.ts
// afterPosition): a cursor, a Last-Event-ID, the webhook mark or an endpoint's start that named a purged
// event resumes with exactly the events after it.
//
// The prefix ends at the first event that is not older than the cut-off, or at the visibility horizon
// (only published events are considered: every transaction with a txid at or below the boundary has
// ended, so no event can later appear at or before it). It is deleted in bounded steps, each its own
// short transaction: read the next `batch` events of the order, delete the leading run of old ones,
// move the boundary. Several processes may purge at once: the boundary only moves forward.
import { asc, sql } from 'drizzle-orm';
import { executeRows, type Db } from '../data/client.ts';
import { events } from '../data/schema.ts';
import { published, PURGED_THROUGH_SETTING } from './feed.ts';

/** Events read (and at most deleted) per step. Not a contract limit. */
export const PURGE_BATCH = 1000;

/** Deletes the prefix of the published order older than `before`, step by step; returns how many went. */
export async function purgeEventsBefore(db: Db, before: Date, batch = PURGE_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await purgeStep(db, before, batch);
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** One step: the leading run of old events among the next `batch` of the order, deleted; the boundary moved. */
export async function purgeStep(db: Db, before: Date, batch: number): Promise<number> {
  return db.transaction(async (tx) => {
    const head = await tx
      .select({ txid: events.txid, seq: events.seq, old: sql<boolean>`${events.occurredAt} < ${before.toISOString()}::timestamptz` })
      .from(events)
      .where(published)
      .orderBy(asc(events.txid), asc(events.seq))
      .limit(batch);
    let run = 0;
    while (run < head.length && head[run]!.old) run++;
    if (run === 0) return 0;
    const last = head[run - 1]!;
    const txid = Number(last.txid);
    const seq = Number(last.seq);
    await tx.delete(events).where(sql`(${events.txid}, ${events.seq}) <= (${txid}::bigint, ${seq}::bigint)`);
    // Forward only: a slower purger of another process never moves the boundary back.
    await executeRows(
      tx,
      sql`insert into settings (key, value) values (${PURGED_THROUGH_SETTING}, ${`${txid}:${seq}`})
          on conflict (key) do update set value = excluded.value
          where (split_part(settings.value, ':', 1)::bigint, split_part(settings.value, ':', 2)::bigint) < (${txid}::bigint, ${seq}::bigint)`,
    );
    return run;
  });
}
