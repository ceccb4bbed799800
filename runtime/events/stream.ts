// events.stream: the feed followed over Server-Sent Events. One LISTEN on svc_events per process and
// database (startEventHub, at server start) wakes every open stream; each stream also polls twice a
// second (the fallback when a notification is lost) and reads the outbox after its last sequence
// with its caller's visibility, so a stream carries exactly what events.list would show.
//
// Framing: `retry: 5000` first; one message per event (`id:` event id, `event:` type, `data:` the
// Event as JSON); a `: keep-alive` comment every limits.eventStreamKeepAliveSeconds.
//
// Backpressure: the stream holds at most BUFFER_BYTES queued (a byte-length queuing strategy) plus one
// page; a page is read only while the consumer has room (desiredSize > 0), and the stream's pull
// resumes reading when the socket drains. A reader that stays full and takes nothing for longer than
// the hub's stallMs (SVC_EVENT_STREAM_STALL_SECONDS) is cut off (a slow reader that takes some is not): the connection is destroyed (runtime/stream-cutoff.ts),
// and it reconnects after the `retry:` hint it got first, resuming by Last-Event-ID.
//
// The principal is rebuilt from the database on the same beat, and at once whenever a credential or
// membership changes anywhere (the hub also listens on the key-change channel, which keys.rotate /
// keys.revoke, memberships.revoke and oauth_grants.revoke notify at commit). The stream ends when the
// key is revoked, rotated away or expired, the OAuth grant is revoked, the user is disabled, the
// caller no longer holds the stream's scope (a revoked membership whose label was events:read), or
// no client is left; a revoked membership drops that client at once. An OAuth stream also ends when
// its access token expires (EventStreamOptions.expiresAt, from the token's exp).
import { eq } from 'drizzle-orm';
import type { Database, Db } from '../data/client.ts';
import { apiKeys, oauthGrants } from '../data/schema.ts';
import { KEY_CHANGES_WATERMARK, KEY_REVOKED_CHANNEL } from '../auth/authenticate.ts';
import { keyExpiresAt, keyPrincipal, loadOwner, oauthPrincipal, type RoleRules } from '../auth/principal.ts';
import { EVENTS_CHANNEL } from './events.ts';
import { eventsAfter, lastSeq, toFeedEvent, type FeedFilters } from './feed.ts';
import type { Principal } from '../handler-types.ts';
import { Policy } from '../auth/policy.ts';
import { ProblemError } from '../problem-error.ts';
import { contractLimits } from '../contract-facts.ts';
import { metrics } from '../observability/index.ts';
import { cutOffWith } from '../stream-cutoff.ts';

const POLL_MS = 500; // not a contract limit: the fallback when a NOTIFY is missed
const RETRY_MS = 5000; // not a contract limit: the SSE retry hint
const BATCH = 100; // not a contract limit: rows per read
const BUFFER_BYTES = 64 * 1024; // not a contract limit: bytes a stream queues before it stops reading
/** How long a stream may stay full before it is cut off, unless the hub says otherwise. Not a contract limit. */
export const DEFAULT_STALL_MS = 30_000; // not a contract limit
const MAX_TIMER_MS = 2_147_483_647; // not a contract limit: the largest setTimeout delay

// ------------------------------------------------------------------------------------------------
// The per-process hub: one listener per database, fanned out to the streams.

interface Hub {
  /** Woken on every committed event. */
  subscribers: Set<() => void>;
  /** Woken on every committed credential or membership change (re-check the principal). */
  rechecks: Set<() => void>;
  /** How long a stream of this hub may stay full (its reader not reading) before it is cut off. */
  stallMs: number;
  stop(): Promise<void>;
}
const hubs = new WeakMap<Db, Hub>();

export async function startEventHub(database: Database, options: { stallMs?: number } = {}): Promise<() => Promise<void>> {
  const subscribers = new Set<() => void>();
  const rechecks = new Set<() => void>();
  // Behind a pooler without DATABASE_DIRECT_URL these poll (runtime/data/notifications.ts); each stream
  // also reads the outbox on its own beat, so the events watermark only wakes streams sooner.
  const unlisten = await database.listen(
    EVENTS_CHANNEL,
    () => {
      for (const wake of subscribers) wake();
    },
    { watermark: 'select max(seq)::text as w from events' },
  );
  const unlistenKeys = await database.listen(
    KEY_REVOKED_CHANNEL,
    () => {
      for (const check of rechecks) check();
    },
    { watermark: KEY_CHANGES_WATERMARK },
  );
  const stop = async () => {
    await unlisten();
    await unlistenKeys();
  };
  const hub: Hub = { subscribers, rechecks, stallMs: options.stallMs ?? DEFAULT_STALL_MS, stop };
  hubs.set(database.db, hub);
  return async () => {
    if (hubs.get(database.db) === hub) hubs.delete(database.db);
    await stop();
  };
}

// ------------------------------------------------------------------------------------------------
// Streams per credential (limits.eventStreamsPerCredential).

const openStreams = new Map<string, number>();

/** Streams open in this process (the svc_event_streams_open gauge, read at scrape time). */
export function openStreamCount(): number {
  let n = 0;
  for (const count of openStreams.values()) n += count;
  return n;
}

/** Each open stream's queued bytes, read on demand. */
const queued = new Set<() => number>();

/** Bytes queued in this process's open streams, not yet taken by their sockets. */
export function streamBufferedBytes(): number {
  let n = 0;
  for (const bytes of queued) n += bytes();
  return n;
}

function takeStreamSlot(credentialId: string): () => void {
  const limits = contractLimits();
  const n = openStreams.get(credentialId) ?? 0;
  if (n >= limits.eventStreamsPerCredential) {
    metrics.rateLimited('event_streams');
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

/**
 * The principal as it stands now, rebuilt by the rules a new request would meet (never wider than it
 * was: an OAuth caller keeps at most the scopes it had), or null when the stream must end.
 */
async function recheck(db: Db, principal: Principal, rules: RoleRules | undefined, scope: string | undefined): Promise<Principal | null> {
  const owner = await loadOwner(db, principal.id);
  if (!owner || owner.disabled) return null;
  let next: Principal = principal;
  if (principal.loginMethod === 'api_key') {
    const [key] = await db.select().from(apiKeys).where(eq(apiKeys.id, principal.credentialId));
    if (!key || key.revokedAt || key.ownerUserId !== owner.id || keyExpiresAt(key) <= Date.now()) return null;
    if (rules) next = keyPrincipal(owner, key, rules);
  } else {
    // credentialId is the grant the token came from (or its jti when the person had no live grant).
    const [grant] = await db.select({ revokedAt: oauthGrants.revokedAt }).from(oauthGrants).where(eq(oauthGrants.id, principal.credentialId));
    if (grant?.revokedAt) return null;
    if (rules) next = { ...oauthPrincipal(owner, { credentialId: principal.credentialId, oauthClientId: principal.oauthClientId ?? '', granted: principal.scopes }, rules), expiresAt: principal.expiresAt };
  }
  if (scope !== undefined && !next.scopes.has(scope)) return null;
  if (next.clientScope.all) return next;
  // Never more clients than at opening (a stream keeps the reach it was opened with, minus what was lost).
  const before = principal.clientScope.all ? null : new Set(principal.clientScope.clientIds);
  const clientIds = next.clientScope.clientIds.filter((id) => before === null || before.has(id));
  if (clientIds.length === 0) return null;
  return { ...next, clientScope: { all: false, clientIds } };
}

export interface EventStreamOptions {
  db: Db;
  principal: Principal;
  filters: FeedFilters;
  /** Start after this sequence (Last-Event-ID or after); null: new events only. */
  afterSeq: number | null;
  /** When the credential stops being valid (an access token's exp); the stream ends then. */
  expiresAt?: Date | null;
  /** The role rules (service.scopes, service.roleScopes) to rebuild the principal with on a re-check. */
  rules?: RoleRules;
  /** The scope the stream needs (events.stream's); a re-check without it ends the stream. */
  scope?: string;
}

export async function openEventStream(options: EventStreamOptions): Promise<ReadableStream<Uint8Array>> {
  const release = takeStreamSlot(options.principal.credentialId);
  const encoder = new TextEncoder();
  const { db, filters } = options;
  const stallMs = hubs.get(db)?.stallMs ?? DEFAULT_STALL_MS;
  let principal = options.principal;
  let policy = new Policy(principal);
  let cursor = options.afterSeq ?? (await lastSeq(db));
  let closed = false;
  let pumping: Promise<void> | null = null;
  let again = false;
  /** Since when the consumer has had no room and taken nothing (null: it has room). */
  let fullSince: number | null = null;
  /** Queued bytes at the last check: while full nothing is enqueued, so fewer means the reader took some. */
  let queuedBefore = 0;
  const timers: ReturnType<typeof setInterval>[] = [];
  let wake: (() => void) | null = null;
  let checkNow: (() => void) | null = null;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const cut = new AbortController();
  const bytes = () => (closed ? 0 : Math.max(0, BUFFER_BYTES - (controller.desiredSize ?? BUFFER_BYTES)));
  const room = () => !closed && (controller.desiredSize ?? 0) > 0;

  const write = (text: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      close();
      return;
    }
    if (!room() && fullSince === null) {
      fullSince = Date.now();
      queuedBefore = bytes();
    }
  };
  function close(): void {
    if (closed) return;
    closed = true;
    queued.delete(bytes);
    for (const t of timers) clearInterval(t);
    if (wake) hubs.get(db)?.subscribers.delete(wake);
    if (checkNow) hubs.get(db)?.rechecks.delete(checkNow);
    release();
    try {
      controller.close();
    } catch {
      // already closed or cancelled
    }
  }
  /** A reader full and taking nothing for longer than stallMs: end the stream and its connection (it resumes by Last-Event-ID). */
  function cutOffIfStalled(): void {
    if (closed || fullSince === null) return;
    const now = bytes();
    if (now < queuedBefore) fullSince = Date.now(); // slow, but reading: the stall clock starts again
    queuedBefore = now;
    if (Date.now() - fullSince <= stallMs) return;
    close();
    cut.abort();
  }
  async function drain(): Promise<void> {
    // One page at a time, and only while the consumer has room: at most BUFFER_BYTES and a page queued.
    while (room()) {
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

  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        queued.add(bytes);
        write(`retry: ${RETRY_MS}\n\n`);
        wake = pump;
        hubs.get(db)?.subscribers.add(wake);
        timers.push(
          setInterval(() => {
            cutOffIfStalled();
            pump();
          }, POLL_MS),
        );
        // One re-check at a time; a change announced during one runs another after it.
        let checking: Promise<void> | null = null;
        let recheckAgain = false;
        checkNow = () => {
          if (closed) return;
          if (checking) {
            recheckAgain = true;
            return;
          }
          checking = recheck(db, principal, options.rules, options.scope)
            .then((now) => {
              if (!now) return close();
              principal = now;
              policy = new Policy(now);
            })
            .catch(() => undefined)
            .finally(() => {
              checking = null;
              if (recheckAgain) {
                recheckAgain = false;
                checkNow?.();
              }
            });
        };
        hubs.get(db)?.rechecks.add(checkNow);
        timers.push(
          setInterval(() => {
            if (room()) write(': keep-alive\n\n');
            checkNow?.();
          }, contractLimits().eventStreamKeepAliveSeconds * 1000),
        );
        if (options.expiresAt) {
          // The token's end: the stream ends with it (the timer is cleared with the others on close).
          const left = Math.min(Math.max(0, options.expiresAt.getTime() - Date.now()), MAX_TIMER_MS);
          timers.push(setTimeout(close, left) as unknown as ReturnType<typeof setInterval>);
        }
        for (const t of timers) (t as { unref?: () => void }).unref?.();
        pump();
      },
      // The consumer took what was queued and has room again: read on.
      pull() {
        if (fullSince === null) return; // not stopped for room: the pump is running or waiting for events
        fullSince = null;
        pump();
      },
      cancel() {
        close();
      },
    },
    { highWaterMark: BUFFER_BYTES, size: (chunk) => chunk.byteLength },
  );
  return cutOffWith(stream, cut.signal);
}
