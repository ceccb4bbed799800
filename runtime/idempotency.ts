// Idempotency-Key, shared by REST and MCP. Keyed by (credential, operation, key); the record keeps
// a fingerprint of the canonical input, so a reuse with another input is 422 idempotency_key_reused.
// Insert-first: the first request inserts an in_progress row (ON CONFLICT DO NOTHING); a concurrent
// duplicate finds it and answers the retryable 409 idempotency_key_in_progress; once the first
// finished, its response is replayed with Idempotency-Replayed: true. 5xx answers are not stored
// (the row is deleted, so a retry runs again). Records are kept limits.idempotencyRetentionHours.
import { createHash } from 'node:crypto';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from './db/client.ts';
import { idempotencyRecords } from './db/schema.ts';
import { ProblemError, validationFailed } from './problem-error.ts';

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

export type BeginResult = { kind: 'new' } | { kind: 'replay'; response: StoredResponse };

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

/**
 * Claims the key (insert-first) or finds the earlier call. Throws idempotency_key_reused (other
 * input) or idempotency_key_in_progress (first still running).
 */
export async function beginIdempotent(db: Db, s: IdempotencyScope, retentionHours: number, now = new Date()): Promise<BeginResult> {
  const expiresAt = new Date(now.getTime() + retentionHours * 3600_000);
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db
      .insert(idempotencyRecords)
      .values({ ...s, state: 'in_progress', createdAt: now, expiresAt })
      .onConflictDoNothing()
      .returning({ key: idempotencyRecords.key });
    if (inserted.length > 0) return { kind: 'new' };
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
      throw new ProblemError('idempotency_key_in_progress', 'The first request with this Idempotency-Key is still running; retry shortly.', {
        headers: { 'Retry-After': '1' },
      });
    }
    const headers = { ...((row.responseHeaders as Record<string, string> | null) ?? {}) };
    const body = row.responseBody as { problem?: StoredResponse['problem']; body?: unknown } | null;
    return {
      kind: 'replay',
      response: { status: row.responseStatus ?? 200, body: body?.body ?? null, headers, problem: body?.problem },
    };
  }
  throw new ProblemError('idempotency_key_in_progress', 'The Idempotency-Key is being claimed by another request; retry shortly.', {
    headers: { 'Retry-After': '1' },
  });
}

/** Stores the finished call's answer (in the caller's transaction when it is the write's own). */
export async function completeIdempotent(db: Db, s: IdempotencyScope, response: StoredResponse): Promise<void> {
  await db
    .update(idempotencyRecords)
    .set({
      state: 'done',
      responseStatus: response.status,
      responseBody: { body: response.body ?? null, ...(response.problem ? { problem: response.problem } : {}) },
      responseHeaders: response.headers,
    })
    .where(where(s));
}

/** Forgets the claim (5xx, unexpected failure): a retry runs the write again. */
export async function abandonIdempotent(db: Db, s: IdempotencyScope): Promise<void> {
  await db.delete(idempotencyRecords).where(where(s));
}

/** Deletes expired records; returns how many. */
export async function purgeExpiredIdempotency(db: Db, now = new Date()): Promise<number> {
  const gone = await db
    .delete(idempotencyRecords)
    .where(lt(idempotencyRecords.expiresAt, sql`${now.toISOString()}::timestamptz`))
    .returning({ key: idempotencyRecords.key });
  return gone.length;
}
