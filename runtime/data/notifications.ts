// How one process hears what another committed, on PostgreSQL (PGlite is one process: its own LISTEN).
//
// LISTEN needs one server connection for the life of the listener. A transaction pooler (PgBouncer in
// transaction mode, the hosted poolers) hands each transaction whichever server connection is free,
// so a LISTEN through it hears some notifications, or none. Three modes, chosen once at start:
//
//   listen        DATABASE_DIRECT_URL is set: LISTEN on a small client of its own on that URL, which
//                 must be a session connection (checked at start; the process refuses to start if not).
//   listen+poll   no DATABASE_DIRECT_URL, and DATABASE_URL passed the same check (PostgreSQL itself):
//                 LISTEN on it for speed, and poll as well, since a pooler may pass the check by chance.
//   poll          no DATABASE_DIRECT_URL, and DATABASE_URL is not a session connection (a pooler):
//                 every listener polls its watermark query.
//
// Polling: a listener hands `listen` a watermark, a query answering one value (column `w`) that changes
// whenever something the channel announces is committed (max(seq) of the events, revocation times of
// credentials). Every POLL_MS the process runs each distinct watermark once and calls that channel's
// listeners with an empty payload when the value moved ("something changed; re-read").
import { randomBytes } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import type { Row } from './db-types.ts';

export const POLL_MS = 500; // not a contract limit: the cross-process bounds (2 s) leave room for 3 polls

export type NotificationMode = 'listen' | 'listen+poll' | 'poll' | 'in-process';

export interface ListenOptions {
  /** A query answering one row with a column `w` that changes whenever the channel would be notified. */
  watermark?: SQL | string;
}

interface Watch {
  query: SQL | string;
  last: string | undefined;
  listeners: Set<(payload: string) => void>;
}

/** One timer per database running each distinct watermark query once a beat. */
export class WatermarkPoller {
  private readonly watches = new Map<string, Watch>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private stopped = false;

  constructor(
    private readonly execute: (query: SQL | string) => Promise<Row[]>,
    private readonly onError: (message: string) => void = () => {},
    private readonly intervalMs = POLL_MS,
  ) {}

  /** Watch `query`; fn('') whenever its value moves. Resolves once the first value is read. */
  async add(channel: string, query: SQL | string, fn: (payload: string) => void): Promise<() => void> {
    const key = `${channel}\u0000${typeof query === 'string' ? query : JSON.stringify(query.queryChunks)}`;
    let watch = this.watches.get(key);
    if (!watch) {
      watch = { query, last: undefined, listeners: new Set() };
      this.watches.set(key, watch);
      watch.last = await this.read(watch);
    }
    watch.listeners.add(fn);
    this.schedule();
    const w = watch;
    return () => {
      w.listeners.delete(fn);
      if (w.listeners.size === 0 && this.watches.get(key) === w) this.watches.delete(key);
    };
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async read(watch: Watch): Promise<string | undefined> {
    try {
      const [row] = await this.execute(watch.query);
      return row?.w === null || row?.w === undefined ? '' : String(row.w);
    } catch (err) {
      this.onError(`watermark poll failed: ${err instanceof Error ? err.message : String(err)}`);
      return watch.last;
    }
  }

  private schedule(): void {
    if (this.timer || this.stopped || this.running) return;
    this.timer = setTimeout(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = null;
    if (this.stopped || this.watches.size === 0) return;
    this.running = true;
    try {
      for (const watch of [...this.watches.values()]) {
        if (this.stopped) return;
        const value = await this.read(watch);
        if (value === undefined) continue;
        const moved = watch.last !== undefined && value !== watch.last;
        watch.last = value;
        if (moved) for (const fn of [...watch.listeners]) fn('');
      }
    } finally {
      this.running = false;
      this.schedule();
    }
  }
}

/** The driver's client factory (postgres.js default export), as far as the check needs it. */
type PostgresFactory = (url: string, options: Record<string, unknown>) => {
  listen(channel: string, fn: (payload: string) => void): Promise<{ unlisten(): Promise<void> }>;
  notify(channel: string, payload: string): Promise<unknown>;
  end(options?: { timeout?: number }): Promise<void>;
};

/**
 * Whether `url` is a session connection: LISTEN on a random channel, NOTIFY it from another connection
 * of the same URL, and wait up to timeoutMs for it. PostgreSQL itself answers in milliseconds; through
 * a transaction pooler the listener's server connection is handed back after the LISTEN and nothing
 * is heard. `options` adds postgres.js options (the probe's application_name).
 */
export async function isSessionConnection(postgres: PostgresFactory, url: string, timeoutMs: number, options: Record<string, unknown> = {}): Promise<boolean> {
  const probe = postgres(url, { ...options, max: 1, prepare: false, onnotice: () => {}, connect_timeout: Math.ceil(timeoutMs / 1000) + 5 });
  const channel = `svc_probe_${randomBytes(6).toString('hex')}`;
  const token = randomBytes(8).toString('hex');
  try {
    let heard: () => void = () => {};
    const got = new Promise<boolean>((resolve) => {
      heard = () => resolve(true);
    });
    await probe.listen(channel, (payload) => {
      if (payload === token) heard();
    });
    await probe.notify(channel, token);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const result = await Promise.race([got, timeout]);
    clearTimeout(timer);
    return result;
  } finally {
    await probe.end({ timeout: 1 }).catch(() => {});
  }
}

/** The host:port/db of a URL, for messages (never its password). */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}
