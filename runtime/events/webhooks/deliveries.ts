// Webhook deliveries: fan-out from the events outbox, claiming due rows (FOR UPDATE SKIP LOCKED plus
// a lease, so two processes never send one delivery at once and a killed process's claim lapses),
// one signed attempt, the retry schedule, and the 30-day retention sweep.
import { and, asc, eq, gt, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { executeRows, type Db } from '../../data/client.ts';
import { events, memberships, settings, users, webhookAttempts, webhookDeliveries, webhookEndpoints, webhookSecrets } from '../../data/schema.ts';
import type { Principal } from '../../handler-types.ts';
import { newId } from '../../data/ids.ts';
import { Policy } from '../../auth/policy.ts';
import { openSecret } from '../../auth/secret-fields.ts';
import { afterPosition, published, toFeedEvent } from '../feed.ts';
import { purgeEventsBefore } from '../retention.ts';
import { migrationsFolder } from '../../contract-facts.ts';
import { assertSchemaKnown } from '../../data/migrations-pending.ts';
import { contractLimits } from '../../contract-facts.ts';
import { signatureHeaders } from './signing.ts';
import { webhookUrlProblem } from './ssrf.ts';
import { observeWebhookAttempt } from '../../observability/index.ts';
import { eventTraceparent } from '../../observability/event-trace.ts';

/**
 * The contract's schedule (schemas/webhooks.yaml WebhookDeliveryStatus): the first attempt at once,
 * then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; after the eighth failure the delivery is failed.
 */
export const RETRY_DELAYS_MS: readonly number[] = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]; // not a contract limit: the schedule of the webhooks decision
/** One attempt's timeout (limits.webhookAttemptTimeoutSeconds). */
export function attemptTimeoutMs(): number {
  const limits = contractLimits();
  return limits.webhookAttemptTimeoutSeconds * 1000;
}
/** How long events and deliveries are kept (limits.eventRetentionDays). */
export function retentionMs(): number {
  const limits = contractLimits();
  return limits.eventRetentionDays * 86_400_000;
}
/** How long a claim holds a row: longer than one attempt's timeout. Not a contract limit. */
const leaseMs = (): number => attemptTimeoutMs() * 3;
/**
 * The settings row holding the fan-out's high-water mark (also read by the outbox gauges,
 * observability/database-gauges.ts). Migration 0017 moved it off LEGACY_FANOUT_SETTING, which
 * processes from before it still move (docs/decisions.md, mixed versions).
 */
export const FANOUT_SETTING = 'webhooks_fanout_position';
/** The mark of builds before migration 0017; this build neither reads nor writes it. */
export const LEGACY_FANOUT_SETTING = 'webhooks_fanout_seq';

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type EndpointRow = typeof webhookEndpoints.$inferSelect;

export const secretPurpose = (endpointId: string) => `webhook_secret:${endpointId}`;

/** The endpoint's valid signing secrets, newest first (two during a rotation overlap). */
export async function validSecrets(db: Db, endpointId: string, now: Date): Promise<string[]> {
  const rows = await db
    .select()
    .from(webhookSecrets)
    .where(and(eq(webhookSecrets.endpointId, endpointId), or(isNull(webhookSecrets.validUntil), gt(webhookSecrets.validUntil, now))))
    .orderBy(sql`${webhookSecrets.createdAt} desc`);
  return Promise.all(rows.map((r) => openSecret(db, secretPurpose(endpointId), r.sealed)));
}

/** The owner's live reach, as a Policy (visibility rules 1 and 4): null when the owner is gone or disabled. */
export async function ownerPolicy(db: Db, endpoint: EndpointRow): Promise<Policy | null> {
  const [user] = await db.select().from(users).where(eq(users.id, endpoint.ownerUserId));
  if (!user || user.disabledAt) return null;
  let clientScope: Principal['clientScope'];
  if (user.kind === 'operator' && user.allClients) clientScope = { all: true, clientIds: [] };
  else {
    const rows = await db
      .select({ clientId: memberships.clientId })
      .from(memberships)
      .where(and(eq(memberships.userId, user.id), eq(memberships.status, 'active')));
    clientScope = { all: false, clientIds: rows.map((r) => r.clientId) };
  }
  const principal = {
    kind: user.kind as Principal['kind'],
    id: user.id,
    loginMethod: endpoint.widened && user.kind === 'operator' ? 'oauth' : 'api_key',
    credentialId: 'webhook-owner',
    role: user.role,
    scopes: new Set<string>(),
    clientScope,
    oauthClientId: null,
  } satisfies Principal;
  return new Policy(principal);
}

/** Whether the endpoint may receive an event now: its types, its client binding, its owner's live reach. */
export async function endpointMaySee(db: Db, endpoint: EndpointRow, event: { clientId: string | null }): Promise<boolean> {
  if (endpoint.clientId !== null && event.clientId !== endpoint.clientId) return false;
  const policy = await ownerPolicy(db, endpoint);
  return policy !== null && policy.canReadRecord(event);
}

/**
 * Turns new outbox events into pending deliveries, once: the high-water mark is a settings row
 * locked FOR UPDATE, and (endpoint, event) is unique. Returns how many deliveries were created.
 * Throws SchemaNewerError (and creates nothing) once a newer build has migrated the database: read in
 * the statement that locks the mark, so no fan-out of this build follows a migration it does not know.
 */
export async function fanOut(db: Db, now: Date, batch = 500): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.insert(settings).values({ key: FANOUT_SETTING, value: '0' }).onConflictDoNothing({ target: settings.key });
    const [mark] = await tx
      .select({ value: settings.value, schema: sql<string | null>`(select max(created_at) from drizzle.__drizzle_migrations)` })
      .from(settings)
      .where(eq(settings.key, FANOUT_SETTING))
      .for('update');
    assertSchemaKnown(mark!.schema === null ? null : Number(mark!.schema), migrationsFolder());
    const after = Number(mark!.value);
    // The published order (runtime/events/feed.ts): a fan-out never passes an event that commits later.
    const rows = await tx.select().from(events).where(and(published, afterPosition(after))).orderBy(asc(events.txid), asc(events.seq)).limit(batch);
    if (rows.length === 0) return 0;
    const endpoints = await tx.select().from(webhookEndpoints).where(eq(webhookEndpoints.status, 'enabled'));
    // An endpoint gets the events published after its start position (an event's seq, as the mark).
    const starts = await startPositions(tx, endpoints.map((ep) => ep.startSeq));
    const values: (typeof webhookDeliveries.$inferInsert)[] = [];
    for (const e of rows) {
      for (const ep of endpoints) {
        if (!afterStart(e, ep.startSeq, starts) || !ep.eventTypes.includes(e.type)) continue;
        if (ep.clientId !== null && e.clientId !== ep.clientId) continue;
        values.push({
          id: newId('webhookDelivery'),
          endpointId: ep.id,
          eventId: e.id,
          eventType: e.type,
          payload: toFeedEvent(e),
          status: 'pending',
          nextAttemptAt: now,
          createdAt: now,
        });
      }
    }
    for (let i = 0; i < values.length; i += 200) {
      await tx.insert(webhookDeliveries).values(values.slice(i, i + 200)).onConflictDoNothing();
    }
    await tx.update(settings).set({ value: String(rows[rows.length - 1]!.seq) }).where(eq(settings.key, FANOUT_SETTING));
    return values.length;
  });
}

/** The (txid, seq) of each start position (a seq; absent or purged: txid 0, exact under the prefix purge, events/feed.ts). */
async function startPositions(db: Db, seqs: number[]): Promise<Map<number, number>> {
  const wanted = [...new Set(seqs.filter((s) => s > 0))];
  if (wanted.length === 0) return new Map();
  const rows = await db.select({ seq: events.seq, txid: events.txid }).from(events).where(inArray(events.seq, wanted));
  return new Map(rows.map((r) => [Number(r.seq), Number(r.txid)]));
}

function afterStart(e: { txid: number; seq: number }, startSeq: number, starts: Map<number, number>): boolean {
  const txid = starts.get(startSeq) ?? 0;
  return e.txid > txid || (e.txid === txid && e.seq > startSeq);
}

/** Claims up to `limit` due deliveries for this worker (FOR UPDATE SKIP LOCKED, then a lease). */
export async function claimDue(db: Db, now: Date, limit: number): Promise<DeliveryRow[]> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.status, 'pending'),
          lte(webhookDeliveries.nextAttemptAt, now),
          or(isNull(webhookDeliveries.lockedUntil), lte(webhookDeliveries.lockedUntil, now)),
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(limit)
      .for('update', { skipLocked: true });
    if (due.length === 0) return [];
    return tx
      .update(webhookDeliveries)
      .set({ lockedUntil: new Date(now.getTime() + leaseMs()) })
      .where(inArray(webhookDeliveries.id, due.map((d) => d.id)))
      .returning();
  });
}

export interface AttemptOutcome {
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * One signed POST (no redirects followed), 10 s timeout. The SSRF guard runs again before sending.
 * Observed (runtime/observability): a span continuing `parent` (the traceparent stored with the event;
 * null: the active span) whose traceparent the receiver gets, and the attempt metrics.
 */
export function send(url: string, eventId: string, payload: unknown, secrets: readonly string[], parent: string | null = null): Promise<AttemptOutcome> {
  return observeWebhookAttempt(parent, (traceHeaders) => attempt(url, eventId, payload, secrets, traceHeaders));
}

async function attempt(url: string, eventId: string, payload: unknown, secrets: readonly string[], traceHeaders: Record<string, string>): Promise<AttemptOutcome> {
  const started = performance.now();
  const done = (o: Omit<AttemptOutcome, 'durationMs'>): AttemptOutcome => ({ ...o, durationMs: Math.round(performance.now() - started) });
  const problem = await webhookUrlProblem(url);
  if (problem) return done({ ok: false, responseStatus: null, error: `refused: the URL ${problem}` });
  if (secrets.length === 0) return done({ ok: false, responseStatus: null, error: 'the endpoint has no valid signing secret' });
  const body = JSON.stringify(payload);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'svc-webhooks', ...traceHeaders, ...signatureHeaders(eventId, body, secrets) },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(attemptTimeoutMs()),
    });
    await res.body?.cancel().catch(() => undefined);
    const ok = res.status >= 200 && res.status < 300;
    return done({ ok, responseStatus: res.status, error: ok ? null : `non-2xx answer (${res.status})` });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const why = e.name === 'TimeoutError' ? `timeout after ${attemptTimeoutMs() / 1000} s` : e.cause?.code === 'ECONNREFUSED' ? 'connection refused' : `no answer (${e.cause?.code ?? e.name})`;
    return done({ ok: false, responseStatus: null, error: why });
  }
}

/** Records an attempt's outcome on the delivery and in its history; schedules the next one or ends it. */
export async function recordAttempt(db: Db, delivery: DeliveryRow, outcome: AttemptOutcome, now: Date, retries: boolean): Promise<DeliveryRow> {
  const attempt = delivery.attempts + 1;
  const next = outcome.ok || !retries || attempt >= RETRY_DELAYS_MS.length ? null : new Date(now.getTime() + RETRY_DELAYS_MS[attempt]!);
  const status = outcome.ok ? 'succeeded' : next ? 'pending' : 'failed';
  await db.insert(webhookAttempts).values({
    deliveryId: delivery.id,
    attempt,
    at: now,
    responseStatus: outcome.responseStatus,
    error: outcome.error,
    durationMs: outcome.durationMs,
  });
  const [row] = await db
    .update(webhookDeliveries)
    .set({ attempts: attempt, status, lastAttemptAt: now, nextAttemptAt: next, lockedUntil: null, responseStatus: outcome.responseStatus, error: outcome.error })
    .where(eq(webhookDeliveries.id, delivery.id))
    .returning();
  return row!;
}

/** Sends one claimed delivery and records the outcome (the endpoint's owner's live reach decides first). */
export async function deliverOne(db: Db, delivery: DeliveryRow, now: Date): Promise<DeliveryRow | null> {
  const [endpoint] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, delivery.endpointId));
  if (!endpoint) {
    await db.delete(webhookDeliveries).where(eq(webhookDeliveries.id, delivery.id));
    return null;
  }
  const payload = delivery.payload as { clientId: string | null };
  let outcome: AttemptOutcome;
  if (endpoint.status !== 'enabled') {
    outcome = { ok: false, responseStatus: null, error: 'the endpoint is disabled', durationMs: 0 };
    return recordAttempt(db, { ...delivery, attempts: RETRY_DELAYS_MS.length - 1 }, outcome, now, false);
  }
  if (!(await endpointMaySee(db, endpoint, payload))) {
    outcome = { ok: false, responseStatus: null, error: "withheld: the event is outside the endpoint owner's reach", durationMs: 0 };
    return recordAttempt(db, { ...delivery, attempts: RETRY_DELAYS_MS.length - 1 }, outcome, now, false);
  }
  outcome = await send(endpoint.url, delivery.eventId, delivery.payload, await validSecrets(db, endpoint.id, now), await eventTraceparent(db, delivery.eventId));
  return recordAttempt(db, delivery, outcome, now, true);
}

/**
 * Deletes events, deliveries and attempts older than limits.eventRetentionDays. Events go as a prefix
 * of the published order, in bounded steps, recording the purge boundary (events/retention.ts).
 */
export async function purgeExpired(db: Db, now: Date, batch = DELIVERY_PURGE_BATCH): Promise<{ events: number; deliveries: number }> {
  const before = new Date(now.getTime() - retentionMs());
  let deliveries = 0;
  for (;;) {
    // A batch of old deliveries and their attempts in one statement (the attempts' key is checked at its end).
    const [row] = await executeRows<{ n: number }>(
      db,
      sql`with old as (select id from webhook_deliveries where created_at < ${before.toISOString()}::timestamptz limit ${batch}),
               a as (delete from webhook_attempts where delivery_id in (select id from old)),
               d as (delete from webhook_deliveries where id in (select id from old) returning 1)
          select count(*)::int as n from d`,
    );
    const n = Number(row?.n ?? 0);
    deliveries += n;
    if (n < batch) break;
  }
  const e = await purgeEventsBefore(db, before);
  return { events: e, deliveries };
}

/** Deliveries (with their attempts) deleted per statement by the retention sweep. */
export const DELIVERY_PURGE_BATCH = 500; // not a contract limit
