// The horizon watch of one process: every SVC_HORIZON_CHECK_SECONDS it reads the events feed's horizon
// (horizon.ts) and, when the transaction holding it has run longer than SVC_HORIZON_WARN_SECONDS,
// writes one warning naming it (`events_horizon_held`), at most once a minute per process. It runs
// on PostgreSQL only (runtime/server.ts): on PGlite one connection serialises every transaction, so
// nothing can hold the feed. Independent of metrics: the warning is written with metrics off too.
import type { Database } from '../data/client.ts';
import { readHorizon, type HorizonHolder, type HorizonReading } from './horizon.ts';
import { errorSummary, logLine, type LogFields } from './log.ts';

/** At most one warning (and one failure line) a process writes in this long. */
export const WARN_EVERY_MS = 60_000; // not a contract limit: the "at most once a minute"

export interface HorizonWatchOptions {
  database: Pick<Database, 'execute'>;
  /** A holder older than this (seconds) is named in a warning. */
  warnSeconds: number;
  /** How often the horizon is read (seconds). */
  checkSeconds: number;
  log: (line: string) => void;
}

export interface HorizonWatch {
  /** One read now (and its warning, if one is due); resolves to what was read, or null on failure. */
  check(): Promise<HorizonReading | null>;
  stop(): Promise<void>;
}

export function startHorizonWatch(options: HorizonWatchOptions): HorizonWatch {
  let lastWarning = -Infinity;
  let lastFailure = -Infinity;
  let running: Promise<HorizonReading | null> | null = null;
  let stopped = false;
  /** The holder last read and when this watch first saw it (its age when the database hides its start). */
  let seen = { key: '', at: 0 };

  /** How long the holder has run: by the database's clock, or since first seen here when its start is hidden. */
  function heldSeconds(holder: HorizonHolder): number {
    const key = `${holder.kind}:${holder.pid ?? holder.gid}:${holder.xid}`;
    if (seen.key !== key) seen = { key, at: Date.now() };
    return holder.ageSeconds ?? (Date.now() - seen.at) / 1000;
  }

  async function readOnce(): Promise<HorizonReading | null> {
    try {
      const reading = await readHorizon(options.database);
      const held = reading.holder ? heldSeconds(reading.holder) : 0;
      if (reading.holder && held > options.warnSeconds && Date.now() - lastWarning >= WARN_EVERY_MS) {
        lastWarning = Date.now();
        options.log(logLine('warn', 'events_horizon_held', holderFields(reading, reading.holder, held, options.warnSeconds)));
      }
      return reading;
    } catch (err) {
      if (!stopped && Date.now() - lastFailure >= WARN_EVERY_MS) {
        lastFailure = Date.now();
        options.log(logLine('error', 'events_horizon_check_failed', { error: errorSummary(err) }));
      }
      return null;
    }
  }

  const check = () =>
    (running ??= readOnce().finally(() => {
      running = null;
    }));
  const timer = setInterval(() => void check(), options.checkSeconds * 1000);
  timer.unref();

  return {
    check,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/** The warning's fields: the holder, how long it held, what waits behind it, and how to end it. */
function holderFields(reading: HorizonReading, holder: HorizonHolder, held: number, warnSeconds: number): LogFields {
  const common: LogFields = {
    holderKind: holder.kind,
    heldSeconds: Math.round(held * 10) / 10,
    thresholdSeconds: warnSeconds,
    unpublishedEvents: reading.unpublished,
    feedLagSeconds: Math.round(reading.lagSeconds * 10) / 10,
    holderXid: holder.xid,
    holderDatabase: holder.database,
  };
  if (holder.kind === 'prepared') {
    return {
      ...common,
      preparedGid: holder.gid,
      preparedAt: holder.since?.toISOString(),
      preparedOwner: holder.owner,
      endWith: 'ROLLBACK PREPARED (or COMMIT PREPARED) with this gid, connected to its database',
    };
  }
  return {
    ...common,
    holderPid: holder.pid,
    holderApplicationName: holder.applicationName,
    holderState: holder.state,
    // Null when svc's role may not read other roles' activity (grant it pg_read_all_stats): heldSeconds then counts from when this process first saw it.
    holderTransactionStart: holder.since?.toISOString() ?? null,
    holderQuery: holder.query,
    endWith: 'select pg_terminate_backend(<holderPid>), once its owner agrees',
  };
}
