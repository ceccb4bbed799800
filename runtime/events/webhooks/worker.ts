// The webhook worker of one process: every poll it fans new outbox events out into deliveries, then
// claims due deliveries (FOR UPDATE SKIP LOCKED plus a lease) and sends them; once an hour it purges
// what is older than the retention. Single-flight: a tick never overlaps the previous one. Any number
// of processes may run it on one PostgreSQL database. Once a newer build has migrated the database
// the fan-out stops for good in this process (said once in the log); sending what is due goes on.
import type { Db } from '../../data/client.ts';
import { SchemaNewerError } from '../../data/migrations-pending.ts';
import { logLine } from '../../observability/log.ts';
import { claimDue, deliverOne, fanOut, purgeExpired } from './deliveries.ts';

export interface WebhookWorkerOptions {
  db: Db;
  /** The clock that schedules (tests inject one); signatures always carry the wall-clock time. */
  now?: () => Date;
  /** Poll interval (not a contract limit). */
  pollMs?: number;
  /** Deliveries sent concurrently per tick. */
  batch?: number;
  onError?: (err: unknown) => void;
  /** Where the worker says that it stopped fanning out (one JSON line). */
  log?: (line: string) => void;
}

export interface WebhookWorker {
  /** One tick: fan out, then send every due delivery. Returns how many attempts were made. */
  runOnce(): Promise<number>;
  purge(): Promise<{ events: number; deliveries: number }>;
  stop(): Promise<void>;
}

export function startWebhookWorker(options: WebhookWorkerOptions, autostart = true): WebhookWorker {
  const now = options.now ?? (() => new Date());
  const batch = options.batch ?? 25;
  let running: Promise<number> | null = null;
  let stopped = false;
  let lastPurge = 0;
  let fanOutStopped = false;

  async function fan(): Promise<void> {
    if (fanOutStopped) return;
    try {
      await fanOut(options.db, now());
    } catch (err) {
      if (!(err instanceof SchemaNewerError)) throw err;
      fanOutStopped = true;
      options.log?.(logLine('error', 'webhook_fanout_stopped', { reason: err.message, appliedMigration: err.applied, knownMigration: err.known }));
    }
  }

  async function tick(): Promise<number> {
    let attempts = 0;
    await fan();
    for (;;) {
      if (stopped) break;
      const claimed = await claimDue(options.db, now(), batch);
      if (claimed.length === 0) break;
      await Promise.all(claimed.map((d) => deliverOne(options.db, d, now()).catch((err) => options.onError?.(err))));
      attempts += claimed.length;
      await fan();
    }
    if (Date.now() - lastPurge > 3_600_000) { // not a contract limit: the sweep interval
      lastPurge = Date.now();
      await purgeExpired(options.db, now());
    }
    return attempts;
  }

  function runOnce(): Promise<number> {
    running ??= tick().finally(() => {
      running = null;
    });
    return running;
  }

  const timer = autostart
    ? setInterval(() => {
        if (!running && !stopped) runOnce().catch((err) => options.onError?.(err));
      }, options.pollMs ?? 250)
    : null;
  timer?.unref();

  return {
    runOnce,
    purge: () => purgeExpired(options.db, now()),
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
