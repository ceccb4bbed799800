// A faithful simulation of what a process built before migration 0016 does with the events outbox
// (issue 39, mixed versions): the SQL its code sent, taken from git history (b77a313^:
// runtime/webhooks/deliveries.ts fanOut, runtime/events-feed.ts eventsAfter), run on a connection of
// its own as such a process would. It follows `seq` alone: no transaction id, no visibility horizon
// (before 0016 every writer took an advisory lock, so sequence order was commit order; writers of
// 0016 and later take none).
import postgres from 'postgres';
import { randomBytes } from 'node:crypto';

/** The fan-out's mark before migration 0017 (settings key). */
export const LEGACY_MARK = 'webhooks_fanout_seq';

export interface LegacyProcess {
  /** One fan-out, as fanOut() of that build: returns how many deliveries it inserted. */
  fanOut(batch?: number): Promise<number>;
  /** One feed page of every event after a seq, as eventsAfter() of that build read it (an operator). */
  eventsAfter(afterSeq: number, limit?: number): Promise<{ seq: number; id: string }[]>;
  mark(): Promise<number | null>;
  close(): Promise<void>;
}

const deliveryId = () => `whd_${randomBytes(10).toString('hex').slice(0, 20)}`;

export function legacyProcess(url: string): LegacyProcess {
  const sql = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
  return {
    async fanOut(batch = 500) {
      return sql.begin(async (tx) => {
        await tx`insert into "settings" ("key", "value", "created_at") values (${LEGACY_MARK}, '0', default) on conflict ("key") do nothing`;
        const [mark] = await tx`select "key", "value", "created_at" from "settings" where "settings"."key" = ${LEGACY_MARK} for update`;
        const after = Number(mark!.value);
        const rows = await tx`select "seq", "id", "type", "occurred_at", "client_id", "subject_id", "actor_kind", "actor_id", "data", "traceparent"
          from "events" where "events"."seq" > ${after} order by "events"."seq" asc limit ${batch}`;
        if (rows.length === 0) return 0;
        const endpoints = await tx`select "id", "client_id", "event_types", "start_seq" from "webhook_endpoints" where "webhook_endpoints"."status" = 'enabled'`;
        let inserted = 0;
        for (const e of rows) {
          for (const ep of endpoints) {
            if (Number(e.seq) <= Number(ep.start_seq) || !(ep.event_types as string[]).includes(e.type)) continue;
            if (ep.client_id !== null && e.client_id !== ep.client_id) continue;
            const payload = { id: e.id, type: e.type, occurredAt: new Date(e.occurred_at).toISOString(), clientId: e.client_id, subjectId: e.subject_id, data: e.data };
            const res = await tx`insert into "webhook_deliveries" ("id", "endpoint_id", "event_id", "event_type", "payload", "status", "next_attempt_at", "created_at")
              values (${deliveryId()}, ${ep.id}, ${e.id}, ${e.type}, ${tx.json(payload)}, 'pending', now(), now()) on conflict do nothing`;
            inserted += res.count;
          }
        }
        await tx`update "settings" set "value" = ${String(rows[rows.length - 1]!.seq)} where "settings"."key" = ${LEGACY_MARK}`;
        return inserted;
      }) as Promise<number>;
    },
    async eventsAfter(afterSeq, limit = 200) {
      const rows = await sql`select "seq", "id" from "events" where "events"."seq" > ${afterSeq} order by "events"."seq" asc limit ${limit}`;
      return rows.map((r) => ({ seq: Number(r.seq), id: String(r.id) }));
    },
    async mark() {
      const [row] = await sql`select "value" from "settings" where "key" = ${LEGACY_MARK}`;
      return row ? Number(row.value) : null;
    },
    close: () => sql.end({ timeout: 5 }),
  };
}
