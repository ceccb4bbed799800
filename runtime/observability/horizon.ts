// The events feed's horizon, read from the database: how far the feed lags behind what has committed,
// and which transaction holds it back. The feed publishes only events whose transaction id lies below
// pg_snapshot_xmin(pg_current_snapshot()) (runtime/events/feed.ts): the oldest transaction with an id
// still running anywhere in the cluster, a session's or a prepared one's. One statement reads it all,
// when Prometheus scrapes (database-gauges.ts) and on the watch's slow beat (horizon-watch.ts), never
// on the request path. docs/observability.md says how an operator finds and ends the holder.
import type { Database } from '../data/client.ts';
import { blankQuoted } from './log.ts';

/** Unpublished events are counted up to this many (a count of millions would cost a scan each read). */
export const UNPUBLISHED_COUNT_CAP = 10_000; // not a contract limit
/** The longest start of a holder's query kept (characters). */
const QUERY_HEAD_CHARS = 200; // not a contract limit

/** The transaction with the oldest id still running: a session's, or a prepared transaction. */
export interface HorizonHolder {
  kind: 'session' | 'prepared';
  /** Its transaction id (xid), as text. */
  xid: string;
  /** When it began (session: xact_start; null when svc's role may not see it) or was prepared. */
  since: Date | null;
  /** Seconds since then, by the database's clock; null with `since`. */
  ageSeconds: number | null;
  /** The database it runs in. */
  database: string | null;
  /** Session: the backend's pid, application_name, state and the start of its latest query (literals blanked). */
  pid: number | null;
  applicationName: string | null;
  state: string | null;
  query: string | null;
  /** Prepared: the global id ROLLBACK PREPARED takes, and the role that prepared it. */
  gid: string | null;
  owner: string | null;
}

export interface HorizonReading {
  /** Age in seconds of the oldest committed event not yet published; 0 when none waits. */
  lagSeconds: number;
  /** Committed events not yet published, up to UNPUBLISHED_COUNT_CAP. */
  unpublished: number;
  /** Age in seconds of the oldest transaction with an id, by kind; 0 when there is none (or its start is hidden). */
  oldestSeconds: { session: number; prepared: number };
  /** The transaction holding the horizon (the oldest id), or null when none runs. */
  holder: HorizonHolder | null;
}

interface Row {
  [column: string]: unknown;
  lag: number | string | null;
  unpublished: number | string;
  session_age: number | string | null;
  prepared_age: number | string | null;
  kind: 'session' | 'prepared' | null;
  xid: string | null;
  since: Date | string | null;
  age: number | string | null;
  database: string | null;
  pid: number | null;
  application_name: string | null;
  state: string | null;
  query: string | null;
  gid: string | null;
  owner: string | null;
}

// Events in (txid, seq) order from the horizon on (the index events_order): those this statement's
// snapshot sees have committed, and none is published yet. Holders: every backend with a transaction
// id (pg_stat_activity, cluster-wide) and every prepared transaction (pg_prepared_xacts); the holder
// is the one whose id is oldest (largest age()), which is the horizon itself.
const HORIZON_SQL = `
with horizon as materialized (select (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint as xmin),
waiting as (
  select e.occurred_at from events e where e.txid >= (select xmin from horizon) order by e.txid, e.seq limit ${UNPUBLISHED_COUNT_CAP}
),
holders as (
  select 'session' as kind, a.backend_xid::text as xid, age(a.backend_xid) as xid_age, a.xact_start as since, a.datname::text as database,
         a.pid, a.application_name, a.state, left(a.query, 2000) as query, null::text as gid, null::text as owner
    from pg_stat_activity a where a.backend_xid is not null
  union all
  select 'prepared', p.transaction::text, age(p.transaction), p.prepared, p.database::text,
         null, null, null, null, p.gid, p.owner::text
    from pg_prepared_xacts p
)
select (select extract(epoch from clock_timestamp() - min(occurred_at)) from waiting) as lag,
       (select count(*) from waiting) as unpublished,
       (select extract(epoch from clock_timestamp() - min(since)) from holders where kind = 'session') as session_age,
       (select extract(epoch from clock_timestamp() - min(since)) from holders where kind = 'prepared') as prepared_age,
       h.kind, h.xid, h.since, extract(epoch from clock_timestamp() - h.since) as age, h.database, h.pid, h.application_name, h.state, h.query, h.gid, h.owner
  from (select 1) as one left join lateral (select * from holders order by xid_age desc limit 1) h on true`;

export async function readHorizon(database: Pick<Database, 'execute'>): Promise<HorizonReading> {
  const [row] = await database.execute<Row>(HORIZON_SQL);
  if (!row) throw new Error('the horizon query answered no row');
  const seconds = (v: number | string | null) => (v === null || v === undefined ? 0 : Math.max(0, Number(v)));
  return {
    lagSeconds: seconds(row.lag),
    unpublished: Number(row.unpublished),
    oldestSeconds: { session: seconds(row.session_age), prepared: seconds(row.prepared_age) },
    holder: row.kind
      ? {
          kind: row.kind,
          xid: String(row.xid),
          since: row.since === null ? null : new Date(row.since),
          ageSeconds: row.age === null ? null : seconds(row.age),
          database: row.database,
          pid: row.pid === null ? null : Number(row.pid),
          applicationName: row.application_name,
          state: row.state,
          query: row.query === null ? null : queryHead(row.query),
          gid: row.gid,
          owner: row.owner,
        }
      : null,
  };
}

/**
 * The start of a query for a log line: at most QUERY_HEAD_CHARS characters, every quoted or
 * dollar-quoted literal blanked, and everything from a literal left open (cut by a truncation)
 * dropped, so no value a client wrote into its SQL reaches the log. Bound parameters never appear in
 * the text PostgreSQL shows (only their $n placeholders).
 */
export function queryHead(query: string): string {
  const undollared = query.replace(/\s+/g, ' ').trim().replace(/\$([A-Za-z_][A-Za-z0-9_]*)?\$[\s\S]*?\$\1\$/g, () => "'…'");
  const blanked = blankQuoted(undollared);
  // A quote that is not part of a blanked literal ('…') opens one that never closes.
  const open = blanked.replace(/(['"`])…\1/g, (m) => ' '.repeat(m.length)).search(/['"`]|\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/);
  const safe = open >= 0 ? `${blanked.slice(0, open)}…` : blanked;
  return safe.length > QUERY_HEAD_CHARS ? `${safe.slice(0, QUERY_HEAD_CHARS)}…` : safe;
}
