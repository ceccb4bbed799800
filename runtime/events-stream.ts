// events.stream: the feed followed over Server-Sent Events. One LISTEN on svc_events per process and
// database (startEventHub, at server start) wakes every open stream; each stream also polls twice a
// second (the fallback when a notification is lost) and reads the outbox after its last sequence
// with its caller's visibility, so a stream carries exactly what events.list would show.
//
// Framing: `retry: 5000` first; one message per event (`id:` event id, `event:` type, `data:` the
// Event as JSON); a `: keep-alive` comment every limits.eventStreamKeepAliveSeconds. The principal
// is re-checked on the same beat: a revoked or expired key, a disabled user, or a membership revoked
// until no client is left ends the stream; a revoked membership drops that client at once.
import { and, eq } from 'drizzle-orm';
import type { Database, Db } from './db/client.ts';
import { apiKeys, memberships, users } from './db/schema.ts';
import { EVENTS_CHANNEL } from './events.ts';
import { eventsAfter, lastSeq, toFeedEvent, type FeedFilters } from './events-feed.ts';
import type { Principal } from './handler-types.ts';
import { Policy } from './policy.ts';
import { ProblemError } from './problem-error.ts';
import { limits } from '../generated/contract.ts';

const KEEP_ALIVE_MS = limits.eventStreamKeepAliveSeconds * 1000;
const POLL_MS = 500; // not a contract limit: the fallback when a NOTIFY is missed
const RETRY_MS = 5000; // not a contract limit: the SSE retry hint
const BATCH = 200; // not a contract limit: rows per read

// ------------------------------------------------------------------------------------------------
// The per-process hub: one listener per database, fanned out to the streams.

interface Hub {
  subscribers: Set<() => void>;
  stop(): Promise<void>;
}
const hubs = new WeakMap<Db, Hub>();

export async function startEventHub(database: Database): Promise<() => Promise<void>> {
  const subscribers = new Set<() => void>();
  const unlisten = await database.listen(EVENTS_CHANNEL, () => {
    for (const wake of subscribers) wake();
  });
  const hub: Hub = { subscribers, stop: unlisten };
  hubs.set(database.db, hub);
  return async () => {
    if (hubs.get(database.db) === hub) hubs.delete(database.db);
    await unlisten();
  };
}

// ------------------------------------------------------------------------------------------------
// Streams per credential (limits.eventStreamsPerCredential).

const openStreams = new Map<string, number>();

function takeStreamSlot(credentialId: string): () => void {
  const n = openStreams.get(credentialId) ?? 0;
  if (n >= limits.eventStreamsPerCredential) {
    throw new ProblemError(
      'rate_limited',
      `This credential already has ${limits.eventStreamsPerCredential} open event streams (limits.eventStreamsPerCredential); close one first.`,
      { headers: { 'Retry-After': String(limits.eventStreamKeepAliveSeconds) } },
    );
  }
  openStreams.set(credentialId, n + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (openStreams.get(credentialId) ?? 1) - 1;
    if (left <= 0) openStreams.delete(credentialId);
    else openStreams.set(credentialId, left);
  };
}

/** The principal as it stands now, or null when it may no longer read (revoked key, disabled user, no client left). */
async function recheck(db: Db, principal: Principal): Promise<Principal | null> {
  if (principal.loginMethod === 'api_key') {
    const [key] = await db.select().from(apiKeys).where(eq(apiKeys.id, principal.credentialId));
    if (!key || key.revokedAt || (key.expiresAt && key.expiresAt.getTime() <= Date.now())) return null;
  }
  const [user] = await db.select({ disabledAt: users.disabledAt }).from(users).where(eq(users.id, principal.id));
  if (!user || user.disabledAt) return null;
  if (principal.clientScope.all) return principal;
  const live = await db
    .select({ clientId: memberships.clientId })
    .from(memberships)
    .where(and(eq(memberships.userId, principal.id), eq(memberships.status, 'active')));
  const liveIds = new Set(live.map((m) => m.clientId));
  // A bound key's clients are its own ∩ its owner's live reach; an owner with every client keeps them.
  const [owner] = await db.select({ all: users.allClients, kind: users.kind }).from(users).where(eq(users.id, principal.id));
  const clientIds = owner?.kind === 'operator' && owner.all ? principal.clientScope.clientIds : principal.clientScope.clientIds.filter((id) => liveIds.has(id));
  if (clientIds.length === 0) return null;
  return { ...principal, clientScope: { all: false, clientIds } };
}

export interface EventStreamOptions {
  db: Db;
  principal: Principal;
  filters: FeedFilters;
  /** Start after this sequence (Last-Event-ID or after); null: new events only. */
  afterSeq: number | null;
  /** When the credential stops being valid (an access token's exp); the stream ends then. */
  expiresAt?: Date | null;
}

export async function openEventStream(options: EventStreamOptions): Promise<ReadableStream<Uint8Array>> {
  const release = takeStreamSlot(options.principal.credentialId);
  const encoder = new TextEncoder();
  const { db, filters } = options;
  let principal = options.principal;
  let policy = new Policy(principal);
  let cursor = options.afterSeq ?? (await lastSeq(db));
  let closed = false;
  let pumping: Promise<void> | null = null;
  let again = false;
  const timers: ReturnType<typeof setInterval>[] = [];
  let wake: (() => void) | null = null;
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  const write = (text: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      close();
    }
  };
  function close(): void {
    if (closed) return;
    closed = true;
    for (const t of timers) clearInterval(t);
    if (wake) hubs.get(db)?.subscribers.delete(wake);
    release();
    try {
      controller.close();
    } catch {
      // already closed or cancelled
    }
  }
  async function drain(): Promise<void> {
    for (;;) {
      const rows = await eventsAfter(db, policy, filters, cursor, BATCH);
      for (const row of rows) {
        if (closed) return;
        write(`id: ${row.id}\nevent: ${row.type}\ndata: ${JSON.stringify(toFeedEvent(row))}\n\n`);
        cursor = Number(row.seq);
      }
      if (rows.length < BATCH) return;
    }
  }
  function pump(): void {
    if (closed) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = drain()
      .catch(() => close())
      .finally(() => {
        pumping = null;
        if (again) {
          again = false;
          pump();
        }
      });
  }

  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      write(`retry: ${RETRY_MS}\n\n`);
      wake = pump;
      hubs.get(db)?.subscribers.add(wake);
      timers.push(setInterval(pump, POLL_MS));
      timers.push(
        setInterval(() => {
          write(': keep-alive\n\n');
          if (options.expiresAt && options.expiresAt.getTime() <= Date.now()) return close();
          recheck(db, principal)
            .then((now) => {
              if (!now) return close();
              principal = now;
              policy = new Policy(now);
            })
            .catch(() => undefined);
        }, KEEP_ALIVE_MS),
      );
      for (const t of timers) (t as { unref?: () => void }).unref?.();
      pump();
    },
    cancel() {
      close();
    },
  });
}
