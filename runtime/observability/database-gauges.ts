// The database-wide gauges, read when Prometheus scrapes (never on the request path): four small
// queries, each answered from an index (approvals_pending, webhook_deliveries_due, the events seq key,
// events_order for the feed's horizon, with pg_stat_activity and pg_prepared_xacts: horizon.ts).
// Every process on one database reads the same values; dashboards take max() over the instances.
import type { Database } from '../data/client.ts';
import { contractFeatures } from '../contract-facts.ts';
import { FANOUT_SETTING } from '../events/webhooks/deliveries.ts';
import { readHorizon, type HorizonReading } from './horizon.ts';

export interface DatabaseGauges {
  /** Proposals waiting for a decision and not expired, by tier ("2", "3"); none without the approvals feature. */
  approvalsPending: Record<string, number>;
  /** Webhook deliveries: pending (never tried), failed (last attempt failed, retry scheduled), dead (no attempt left). */
  deliveries: Record<'pending' | 'failed' | 'dead', number>;
  /** Age in seconds of the oldest event after the fan-out's high-water mark; 0 when none waits. */
  outboxLagSeconds: number;
  /** Events after the high-water mark, counted up to OUTBOX_COUNT_CAP. */
  outboxBacklog: number;
  /** The events feed's lag behind what committed, and the age of what holds it back. */
  horizon: HorizonReading;
}

/** The backlog is counted up to this many events (a count of millions would cost a scan each scrape). */
export const OUTBOX_COUNT_CAP = 10_000; // not a contract limit
/** A scrape gives up on the database after this long (its gauges are then left out). */
const READ_TIMEOUT_MS = 2_000; // not a contract limit

export async function readDatabaseGauges(database: Database): Promise<DatabaseGauges> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the database gauges took too long')), READ_TIMEOUT_MS);
  });
  try {
    return await Promise.race([read(database), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function read(database: Database): Promise<DatabaseGauges> {
  // Without the approvals feature (svc.yaml features) nothing is proposed: no query, no series.
  const approvalsPending: Record<string, number> = {};
  if (contractFeatures().approvals) {
    const approvals = await database.execute<{ tier: number | string; n: number | string }>(
      `select tier, count(*) as n from approvals where status = 'pending' and expires_at > now() group by tier`,
    );
    approvalsPending['2'] = 0;
    approvalsPending['3'] = 0;
    for (const r of approvals) approvalsPending[String(r.tier)] = Number(r.n);
  }

  const deliveryRows = await database.execute<{ state: string; n: number | string }>(
    `select case when status = 'failed' then 'dead' when attempts = 0 then 'pending' else 'failed' end as state, count(*) as n
       from webhook_deliveries where status in ('pending', 'failed') group by 1`,
  );
  const deliveries = { pending: 0, failed: 0, dead: 0 };
  for (const r of deliveryRows) deliveries[r.state as keyof typeof deliveries] = Number(r.n);

  const [outbox] = await database.execute<{ lag: number | string | null; n: number | string }>(
    `select extract(epoch from now() - min(occurred_at)) as lag, count(*) as n from (
       select occurred_at from events
        , coalesce((select value::bigint from settings where key = '${FANOUT_SETTING}'), 0) as mark
        where (txid, seq) > (coalesce((select p.txid from events p where p.seq = mark), 0), mark)
        order by txid, seq limit ${OUTBOX_COUNT_CAP}) waiting`,
  );
  const horizon = await readHorizon(database);
  return {
    horizon,
    approvalsPending,
    deliveries,
    outboxLagSeconds: outbox?.lag === null || outbox?.lag === undefined ? 0 : Math.max(0, Number(outbox.lag)),
    outboxBacklog: Number(outbox?.n ?? 0),
  };
}
