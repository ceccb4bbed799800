// Idempotency-Key, shared by REST and MCP. Keyed by (credential, operation, key); the record keeps
// a fingerprint of the canonical input, so a reuse with another input is 422 idempotency_key_reused.
// Insert-first: the first request inserts an in_progress row (ON CONFLICT DO NOTHING) holding a
// lease it renews while it runs; a concurrent duplicate finds it and answers the retryable 409
// idempotency_key_in_progress; once the first finished, its response is replayed with
// Idempotency-Replayed: true. A crashed holder's lease lapses after LEASE_SECONDS and the next retry
// takes the key over. 5xx answers are not stored (the row is deleted, so a retry runs again).
// Records are kept limits.idempotencyRetentionHours.
//
// Tier 1 writes (issue 24, docs/writes.md) claim the key inside the write's own transaction instead
// (claimInTransaction): the claim, the effect, the events, the audit row and the stored answer
// commit together or not at all, with no lease to renew. A concurrent duplicate's insert waits on
// the unique index until the first transaction ends (Stripe's and the IETF draft's model), then
// replays its answer; the wait is bounded by CLAIM_WAIT_MS (then the retryable 409 above). A crash
// rolls the claim back with the write, so a retry simply runs. Proposals (Tier 2 and 3), which plan
// before their transaction, keep the lease claim.
import { createHash, randomUUID } from 'node:crypto';
import { and, eq, lt, sql } from 'drizzle-orm';
import { executeRows, type Db } from '../data/client.ts';
import { idempotencyRecords } from '../data/schema.ts';
import { statement } from '../data/statement.ts';
import { ProblemError, validationFailed } from '../problem-error.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The header value (quoted structured-field string or bare) -> the key in lower case, or null when
 * absent. Anything but a UUID is validation_failed on /idempotencyKey (the MCP argument's name).
 */
export function parseIdempotencyKey(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  let v = value.trim();
  if (v === '') return null;
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  if (!UUID.test(v)) {
    throw validationFailed([{ pointer: '/idempotencyKey', message: 'must be a UUID' }], 'Idempotency-Key must be a UUID.');
  }
  return v.toLowerCase();
}

/** JSON with object keys sorted, so equal inputs have one text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function fingerprint(operationId: string, input: unknown): string {
  return createHash('sha256').update(`${operationId}\n${canonicalJson(input)}`).digest('hex');
}

/** What a finished call stored: a response, or a problem to throw again. */
export interface StoredResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** Set when the stored answer is a 4xx problem. */
  problem?: { code: string; detail: string; errors: unknown[]; extra: Record<string, unknown>; headers: Record<string, string> };
}

export interface IdempotencyScope {
  /** The credential (Principal.credentialId), never the owner: two keys of one owner never share a replay. */
  credentialId: string;
  operationId: string;
  key: string;
  fingerprint: string;
}

function where(s: IdempotencyScope) {
  return and(
    eq(idempotencyRecords.credentialId, s.credentialId),
    eq(idempotencyRecords.operationId, s.operationId),
    eq(idempotencyRecords.key, s.key),
  );
}

/** How long a claim lives without renewal; its holder renews it every third of that while it runs. */
export const LEASE_SECONDS = 10;

/** A claim held by one request: renewed in the background until released. */
export interface Claim {
  holder: string;
  /** Stops renewing (call when the request is over, whatever its outcome). */
  release(): void;
}

export type BeginResult = { kind: 'new'; claim: Claim } | { kind: 'replay'; response: StoredResponse };

function leaseEnd(now: Date): Date {
  return new Date(now.getTime() + LEASE_SECONDS * 1000);
}

function inProgress(): ProblemError {
  return new ProblemError('idempotency_key_in_progress', 'The first request with this Idempotency-Key is still running; retry shortly.', {
    headers: { 'Retry-After': '1' },
  });
}

function renewing(db: Db, s: IdempotencyScope, holder: string): Claim {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    timer = setTimeout(() => {
      db.update(idempotencyRecords)
        .set({ leaseUntil: leaseEnd(new Date()) })
        .where(and(where(s), eq(idempotencyRecords.holder, holder), eq(idempotencyRecords.state, 'in_progress')))
        .then(
          () => (stopped ? undefined : tick()),
          () => (stopped ? undefined : tick()),
        );
    }, (LEASE_SECONDS * 1000) / 3);
    timer.unref();
  };
  tick();
  return {
    holder,
    release() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/**
 * Claims the key or finds the earlier call. The claim is a lease (LEASE_SECONDS, renewed while the
 * request runs), so a claim whose process died lapses and the next retry takes it over and runs the
 * write once; completion checks the claim is still held (completeIdempotent), so two holders can
 * never both commit. Throws idempotency_key_reused (other input) or idempotency_key_in_progress
 * (the first request is still running).
 */
export async function beginIdempotent(db: Db, s: IdempotencyScope, retentionHours: number, now = new Date()): Promise<BeginResult> {
  const expiresAt = new Date(now.getTime() + retentionHours * 3600_000);
  const holder = randomUUID();
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db
      .insert(idempotencyRecords)
      .values({ ...s, state: 'in_progress', holder, leaseUntil: leaseEnd(now), createdAt: now, expiresAt })
      .onConflictDoNothing()
      .returning({ key: idempotencyRecords.key });
    if (inserted.length > 0) return { kind: 'new', claim: renewing(db, s, holder) };
    const [row] = await db.select().from(idempotencyRecords).where(where(s)).limit(1);
    if (!row) continue; // deleted meanwhile (a 5xx first call): claim again
    if (row.expiresAt.getTime() <= now.getTime()) {
      await db.delete(idempotencyRecords).where(and(where(s), lt(idempotencyRecords.expiresAt, sql`${now.toISOString()}::timestamptz`)));
      continue;
    }
    if (row.fingerprint !== s.fingerprint) {
      throw new ProblemError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used for a different request. Send a new UUID for a new write.',
      );
    }
    if (row.state !== 'done') {
      if (row.leaseUntil.getTime() > now.getTime()) throw inProgress();
      // The holder stopped renewing (its process died): take the claim over, if nobody else did first.
      const taken = await db
        .update(idempotencyRecords)
        .set({ holder, leaseUntil: leaseEnd(now) })
        .where(
          and(
            where(s),
            eq(idempotencyRecords.state, 'in_progress'),
            lt(idempotencyRecords.leaseUntil, sql`${now.toISOString()}::timestamptz`),
          ),
        )
        .returning({ key: idempotencyRecords.key });
      if (taken.length > 0) return { kind: 'new', claim: renewing(db, s, holder) };
      throw inProgress();
    }
    const headers = { ...((row.responseHeaders as Record<string, string> | null) ?? {}) };
    const body = row.responseBody as { problem?: StoredResponse['problem']; body?: unknown } | null;
    return {
      kind: 'replay',
      response: { status: row.responseStatus ?? 200, body: body?.body ?? null, headers, problem: body?.problem },
    };
  }
  throw inProgress();
}

/**
 * Stores the finished call's answer (in the write's own transaction, so the answer and the effect
 * commit together). Throws idempotency_key_in_progress when the claim was lost to a takeover: the
 * caller's transaction rolls back and only the new holder's write remains.
 */
export async function completeIdempotent(db: Db, s: IdempotencyScope, holder: string, response: StoredResponse): Promise<void> {
  const done = await completionStatement(db, s, holder, response);
  if (done.length === 0) throw inProgress();
}

/** How long a duplicate waits for the first request's transaction before the retryable 409. */
export const CLAIM_WAIT_MS = 5_000; // not a contract limit

export type TxClaim = { kind: 'new'; holder: string } | { kind: 'replay'; response: StoredResponse };

function storedOf(row: typeof idempotencyRecords.$inferSelect): StoredResponse {
  const headers = { ...((row.responseHeaders as Record<string, string> | null) ?? {}) };
  const body = row.responseBody as { problem?: StoredResponse['problem']; body?: unknown } | null;
  return { status: row.responseStatus ?? 200, body: body?.body ?? null, headers, problem: body?.problem };
}

const p = (name: string) => sql.placeholder(name);
/** The claim, built once (runtime/data/statement.ts): the same text and parameters as a template per call. */
const claimStatement = statement(
  'idempotency_claim',
  () => sql`insert into idempotency_records (credential_id, operation_id, key, fingerprint, state, holder, lease_until, created_at, expires_at)
            select ${p('credentialId')}, ${p('operationId')}, ${p('key')}, ${p('fingerprint')}, 'in_progress', ${p('holder')},
                   ${p('leaseUntil')}::timestamptz, ${p('createdAt')}::timestamptz, ${p('expiresAt')}::timestamptz
             where set_config('lock_timeout', ${p('lockTimeout')} || left(set_config('svc.lock_timeout', current_setting('lock_timeout'), true), 0), true) is not null
            on conflict do nothing
            returning set_config('lock_timeout', current_setting('svc.lock_timeout'), true) as restored`,
);

/**
 * Claims the key in the write's transaction (one statement when the key is new). The insert waits on
 * the unique index while another transaction holds the same key, at most CLAIM_WAIT_MS (a local
 * lock_timeout, set in the statement, the one before kept in svc.lock_timeout and restored by its RETURNING). Then: the first answer
 * (replay), idempotency_key_reused, or idempotency_key_in_progress (the wait ran out, or a lease
 * claim of a proposal or an older process is live).
 */
export async function claimInTransaction(tx: Db, s: IdempotencyScope, retentionHours: number, now = new Date()): Promise<TxClaim> {
  const expiresAt = new Date(now.getTime() + retentionHours * 3600_000);
  const holder = randomUUID();
  for (let attempt = 0; attempt < 3; attempt++) {
    let inserted: unknown[];
    try {
      inserted = await claimStatement.run(tx, {
        credentialId: s.credentialId,
        operationId: s.operationId,
        key: s.key,
        fingerprint: s.fingerprint,
        holder,
        leaseUntil: leaseEnd(now).toISOString(),
        createdAt: now.toISOString(),
        expiresAt: expiresAt.toISOString(),
        lockTimeout: `${CLAIM_WAIT_MS}ms`,
      });
    } catch (err) {
      if ((err as { code?: string }).code === '55P03' || (err as { cause?: { code?: string } }).cause?.code === '55P03') throw inProgress();
      throw err;
    }
    if (inserted.length > 0) return { kind: 'new', holder };
    // Another transaction has the key (and has ended: the insert waited for it). The lock_timeout
    // stays set for this transaction, which ends without another lock wait (or claims again).
    const [row] = await tx.select().from(idempotencyRecords).where(where(s)).limit(1);
    if (!row) continue;
    if (row.expiresAt.getTime() <= now.getTime()) {
      await tx.delete(idempotencyRecords).where(and(where(s), lt(idempotencyRecords.expiresAt, sql`${now.toISOString()}::timestamptz`)));
      continue;
    }
    if (row.fingerprint !== s.fingerprint) {
      throw new ProblemError('idempotency_key_reused', 'This Idempotency-Key was already used for a different request. Send a new UUID for a new write.');
    }
    if (row.state !== 'done') {
      // A lease claim (a proposal, or an older process): live, or lapsed and taken over here.
      if (row.leaseUntil.getTime() > now.getTime()) throw inProgress();
      await tx.delete(idempotencyRecords).where(and(where(s), eq(idempotencyRecords.state, 'in_progress'), lt(idempotencyRecords.leaseUntil, sql`${now.toISOString()}::timestamptz`)));
      continue;
    }
    return { kind: 'replay', response: storedOf(row) };
  }
  throw inProgress();
}

/** Stores a 4xx answer after its write rolled back (nothing else holds the key then; a racing claim wins). */
export async function storeProblemAnswer(db: Db, s: IdempotencyScope, retentionHours: number, response: StoredResponse, now = new Date()): Promise<void> {
  await db
    .insert(idempotencyRecords)
    .values({
      ...s,
      state: 'done',
      holder: null,
      leaseUntil: now,
      responseStatus: response.status,
      responseBody: { body: response.body ?? null, ...(response.problem ? { problem: response.problem } : {}) },
      responseHeaders: response.headers,
      createdAt: now,
      expiresAt: new Date(now.getTime() + retentionHours * 3600_000),
    })
    .onConflictDoNothing();
}

/** The stored answer's UPDATE as a statement to batch with others (the final statement of a write). */
export function completionStatement(db: Db, s: IdempotencyScope, holder: string, response: StoredResponse) {
  return db
    .update(idempotencyRecords)
    .set({
      state: 'done',
      holder: null,
      responseStatus: response.status,
      responseBody: { body: response.body ?? null, ...(response.problem ? { problem: response.problem } : {}) },
      responseHeaders: response.headers,
    })
    .where(and(where(s), eq(idempotencyRecords.holder, holder), eq(idempotencyRecords.state, 'in_progress')))
    .returning({ key: idempotencyRecords.key });
}

/**
 * Replaces a finished write's stored answer with what its after-commit steps made of it
 * (HandlerContext.afterCommit): a replay then returns what the first caller got. One statement, after
 * the write's transaction committed; if the process dies before it, a replay returns the committed answer.
 */
export async function replaceStoredAnswer(db: Db, s: IdempotencyScope, response: StoredResponse): Promise<void> {
  await db
    .update(idempotencyRecords)
    .set({ responseStatus: response.status, responseBody: { body: response.body ?? null }, responseHeaders: response.headers })
    .where(and(where(s), eq(idempotencyRecords.state, 'done')));
}

/** Forgets the claim (5xx, unexpected failure) if still held: a retry runs the write again. */
export async function abandonIdempotent(db: Db, s: IdempotencyScope, holder: string): Promise<void> {
  await db.delete(idempotencyRecords).where(and(where(s), eq(idempotencyRecords.holder, holder)));
}

/** Records deleted per statement by the sweep: each statement short, none holding the events' horizon long. */
export const PURGE_BATCH = 1_000; // not a contract limit

/** Deletes expired records, PURGE_BATCH per statement (each its own transaction); returns how many. */
export async function purgeExpiredIdempotency(db: Db, now = new Date(), batch = PURGE_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await executeRows<{ n: number }>(
      db,
      sql`with gone as (delete from idempotency_records where ctid in
            (select ctid from idempotency_records where expires_at < ${now.toISOString()}::timestamptz limit ${batch}) returning 1)
          select count(*)::int as n from gone`,
    );
    const n = Number(row?.n ?? 0);
    total += n;
    if (n < batch) return total;
  }
}
