// The webhook worker of one process: every poll it fans new outbox events out into deliveries, then
// claims due deliveries (FOR UPDATE SKIP LOCKED plus a lease, committed) into its free sending slots
// and sends them with no transaction open; once an hour it purges what is older than the retention.
// Single-flight: a tick never overlaps the previous one, but never waits for a send either. Any number
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
  /** Deliveries sent at once (sending slots). */
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
  /** Deliveries being sent: a slow receiver occupies one slot, never the next claim. */
  const inflight = new Set<Promise<void>>();
  let ticking: Promise<number> | null = null;
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

  /**
   * Fans out, then claims due deliveries into the free slots and starts sending them, without waiting
   * for them: one receiver that never answers (up to the 10 s attempt timeout) holds its own slot, not
   * every other tenant's deliveries behind it.
   */
  async function tick(): Promise<number> {
    let started = 0;
    await fan();
    while (!stopped && inflight.size < batch) {
      const claimed = await claimDue(options.db, now(), batch - inflight.size);
      if (claimed.length === 0) break;
      for (const d of claimed) {
        const sending: Promise<void> = deliverOne(options.db, d, now())
          .then(() => undefined, (err: unknown) => options.onError?.(err))
          .finally(() => inflight.delete(sending));
        inflight.add(sending);
      }
      started += claimed.length;
      await fan();
    }
    if (Date.now() - lastPurge > 3_600_000) { // not a contract limit: the sweep interval
      lastPurge = Date.now();
      await purgeExpired(options.db, now());
    }
    return started;
  }

  function tickOnce(): Promise<number> {
    ticking ??= tick().finally(() => {
      ticking = null;
    });
    return ticking;
  }

  const timer = autostart
    ? setInterval(() => {
        if (!ticking && !stopped) tickOnce().catch((err) => options.onError?.(err));
      }, options.pollMs ?? 250)
    : null;
  timer?.unref();

  return {
    /** Ticks and waits for every send it started, until nothing is due. */
    async runOnce() {
      let attempts = 0;
      for (;;) {
        const started = await tickOnce();
        await Promise.all(inflight);
        attempts += started;
        if (started === 0 || stopped) return attempts;
      }
    },
    purge: () => purgeExpired(options.db, now()),
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await ticking?.catch(() => undefined);
      await Promise.all(inflight);
    },
  };
}
