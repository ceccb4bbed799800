// Opaque keyset cursors over (createdAt desc, id desc).
//
// A cursor is `base64url(JSON).base64url(HMAC-SHA256)`: the JSON holds the last row's key (its
// created_at to the microsecond, and its id) and a hash of the query it belongs to (operation and
// filters). An altered cursor, or one from another query, is `validation_failed` on /cursor, never
// a 500. Keyset paging is stable under inserts: a new row never shifts a later page.
//
// The signing secret is SVC_CURSOR_SECRET when set, else a random per-database secret kept in the
// settings table (created on first use, or by ensureCursorSecret at open).
//
// Use:
//   const page = await startPage(ctx.db, input, 'tasks.list', { clientId: input.clientId, … });
//   const rows = await ctx.db
//     .select({ ...getTableColumns(tasks), pageKey: pageKeyColumn(tasks.createdAt) })
//     .from(tasks)
//     .where(and(visibility, filters, page.after(tasks.createdAt, tasks.id)))
//     .orderBy(...page.orderBy(tasks.createdAt, tasks.id))
//     .limit(page.fetch);
//   return page.finish(rows, mapTask);
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { desc, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Db } from './db-types.ts';
import { settings } from './schema.ts';
import { invalidField } from '../problem-error.ts';
import { CURSOR_SECRET_SETTING, cursorSecret, ensureCursorSecret } from './cursor-secret.ts';
import { contractLimits } from '../contract-facts.ts';

export { CURSOR_SECRET_SETTING, cursorSecret, ensureCursorSecret };

export interface PageInput {
  cursor?: string | null;
  pageSize?: number | null;
}

export interface PageKey {
  /** created_at as microsecond-precision RFC 3339 text (from pageKeyColumn). */
  ts: string;
  id: string;
}

export interface PageResult<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PageWindow {
  /** Rows asked of the database: pageSize + 1 (the extra row says whether a next page exists). */
  readonly fetch: number;
  readonly pageSize: number;
  /** The decoded position, or null on the first page. */
  readonly position: PageKey | null;
  /** WHERE part: rows strictly after the cursor position (undefined on the first page). */
  after(createdAt: AnyColumn, id: AnyColumn): SQL | undefined;
  /** ORDER BY createdAt desc, id desc. */
  orderBy(createdAt: AnyColumn, id: AnyColumn): SQL[];
  /** Cuts the fetched rows to the page and signs nextCursor from the last row kept. */
  finish<R extends { id: string; pageKey: string }, T>(rows: R[], map: (row: R) => T): PageResult<T>;
}

/** A select column giving created_at as exact text for cursors: select({ …, pageKey: pageKeyColumn(t.createdAt) }). */
export function pageKeyColumn(createdAt: AnyColumn): SQL<string> {
  return sql<string>`to_char(${createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * Validated page size: default limits.pageSizeDefault, at most limits.pageSizeMax (the installed
 * contract's). Out of range answers validation_failed on /pageSize.
 */
export function pageSizeOf(input: PageInput): number {
  const size = input.pageSize;
  const limits = contractLimits();
  if (size === undefined || size === null) return limits.pageSizeDefault;
  if (!Number.isInteger(size) || size < 1 || size > limits.pageSizeMax) {
    throw invalidField('/pageSize', `must be an integer from 1 to ${limits.pageSizeMax}`);
  }
  return size;
}

/** The secret: SVC_CURSOR_SECRET, else the per-database one (created when missing). */
/** Hash of the query a cursor belongs to: operation plus its filters (undefined and null are alike). */
export function queryHash(operation: string, filters: Record<string, unknown>): string {
  const norm: Record<string, unknown> = {};
  for (const k of Object.keys(filters).sort()) {
    const v = filters[k];
    if (v !== undefined && v !== null) norm[k] = v;
  }
  return createHash('sha256').update(JSON.stringify([operation, norm])).digest('base64url').slice(0, 16);
}

interface CursorBody {
  v: 1;
  q: string;
  t: string;
  i: string;
}

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64url');
}

/** A cursor: its JSON body in base64url, a dot, and the body's HMAC (every cursor kind). */
function sealCursor(secret: string, body: Record<string, unknown>): string {
  const encoded = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
  return `${encoded}.${sign(secret, encoded)}`;
}

function encodeCursor(secret: string, query: string, key: PageKey): string {
  const body: CursorBody = { v: 1, q: query, t: key.ts, i: key.id };
  return sealCursor(secret, { ...body });
}

/** What every page starter reads first: the page size, the secret, this query's hash and the cursor's position. */
async function openWindow<K>(
  db: Db,
  input: PageInput,
  operation: string,
  filters: Record<string, unknown>,
  decode: (secret: string, query: string, cursor: string) => K,
): Promise<{ pageSize: number; secret: string; query: string; position: K | null }> {
  const pageSize = pageSizeOf(input);
  const secret = await cursorSecret(db);
  const query = queryHash(operation, filters);
  const position = input.cursor === undefined || input.cursor === null ? null : decode(secret, query, input.cursor);
  return { pageSize, secret, query, position };
}

/** Cuts the fetched rows (pageSize + 1) to the page; nextCursor comes from the last row kept when more follow. */
export function cutPage<R, T>(rows: R[], pageSize: number, map: (row: R) => T, nextCursor: (last: R) => string): PageResult<T> {
  const more = rows.length > pageSize;
  const kept = more ? rows.slice(0, pageSize) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(map), nextCursor: more && last ? nextCursor(last) : null };
}

const TS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A cursor's JSON body once its signature is verified; validation_failed on /cursor otherwise. */
function openCursor<B>(secret: string, cursor: string, maxLength: number): B {
  const bad = (why: string) => invalidField('/cursor', why);
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > maxLength) throw bad('is not a cursor from this API');
  const dot = cursor.indexOf('.');
  if (dot <= 0 || dot !== cursor.lastIndexOf('.')) throw bad('is not a cursor from this API');
  const encoded = cursor.slice(0, dot);
  // The signature's text, not its decoded bytes: base64url's last character carries unused bits, and a
  // lenient decode would take a cursor altered there (or with stray characters) as the one issued.
  const given = Buffer.from(cursor.slice(dot + 1), 'utf8');
  const expected = Buffer.from(sign(secret, encoded), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw bad('was altered or was not issued by this service');
  }
  try {
    return JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as B;
  } catch {
    throw bad('is not a cursor from this API');
  }
}

function decodeCursor(secret: string, query: string, cursor: string): PageKey {
  const bad = (why: string) => invalidField('/cursor', why);
  const body = openCursor<Partial<CursorBody> | null>(secret, cursor, 512); // cursor length cap: not a contract limit
  if (body?.v !== 1 || typeof body.t !== 'string' || !TS_RE.test(body.t) || typeof body.i !== 'string') {
    throw bad('is not a cursor from this API');
  }
  if (body.q !== query) throw bad('belongs to another list or other filters; start again without a cursor');
  return { ts: body.t, id: body.i };
}

/** Reads cursor and pageSize, verifies the cursor against this query, and returns the page window. */
export async function startPage(
  db: Db,
  input: PageInput,
  operation: string,
  filters: Record<string, unknown> = {},
): Promise<PageWindow> {
  const { pageSize, secret, query, position } = await openWindow(db, input, operation, filters, decodeCursor);
  return {
    fetch: pageSize + 1,
    pageSize,
    position,
    after(createdAt, id) {
      if (!position) return undefined;
      return sql`(${createdAt}, ${id}) < (${position.ts}::timestamptz, ${position.id}::text)`;
    },
    orderBy(createdAt, id) {
      return [desc(createdAt), desc(id)];
    },
    finish(rows, map) {
      return cutPage(rows, pageSize, map, (last) => encodeCursor(secret, query, { ts: last.pageKey, id: last.id }));
    },
  };
}

// -------------------------------------------------------------------------------------------------
// Keyset paging by (name asc, id asc): clients.list and crm.accounts.list. Same signed cursor format
// with v: 2 and the last row's name in n.

export interface NamePageWindow {
  readonly fetch: number;
  readonly pageSize: number;
  /** WHERE part: rows strictly after the cursor position (undefined on the first page). */
  after(name: AnyColumn, id: AnyColumn): SQL | undefined;
  /** ORDER BY name asc, id asc. */
  orderBy(name: AnyColumn, id: AnyColumn): SQL[];
  finish<R extends { id: string; name: string }, T>(rows: R[], map: (row: R) => T): PageResult<T>;
}

function encodeNameCursor(secret: string, query: string, key: { name: string; id: string }): string {
  return sealCursor(secret, { v: 2, q: query, n: key.name, i: key.id });
}

function decodeNameCursor(secret: string, query: string, cursor: string): { name: string; id: string } {
  const bad = (why: string) => invalidField('/cursor', why);
  const body = openCursor<{ v?: unknown; q?: unknown; n?: unknown; i?: unknown } | null>(secret, cursor, 2048); // not a contract limit
  if (body?.v !== 2 || typeof body.n !== 'string' || typeof body.i !== 'string') throw bad('is not a cursor from this API');
  if (body.q !== query) throw bad('belongs to another list or other filters; start again without a cursor');
  return { name: body.n, id: body.i };
}

/** Like startPage, ordered by (name, id) ascending. */
export async function startNamePage(
  db: Db,
  input: PageInput,
  operation: string,
  filters: Record<string, unknown> = {},
): Promise<NamePageWindow> {
  const { pageSize, secret, query, position } = await openWindow(db, input, operation, filters, decodeNameCursor);
  return {
    fetch: pageSize + 1,
    pageSize,
    after(name, id) {
      if (!position) return undefined;
      return sql`(${name} collate "C", ${id}) > (${position.name} collate "C", ${position.id}::text)`;
    },
    orderBy(name, id) {
      return [sql`${name} collate "C" asc`, sql`${id} asc`];
    },
    finish(rows, map) {
      return cutPage(rows, pageSize, map, (last) => encodeNameCursor(secret, query, { name: last.name, id: last.id }));
    },
  };
}

// -------------------------------------------------------------------------------------------------
// Keyset paging by (score desc, id asc, type asc): search.query. Same signed cursor format with v: 3;
// the score travels as its exact decimal text (s), the hit's id (i) and type (y).

export interface ScoreKey {
  /** The score as exact decimal text (a numeric rounded in SQL, never a float). */
  score: string;
  id: string;
  type: string;
}

export interface ScorePageWindow {
  readonly fetch: number;
  readonly pageSize: number;
  readonly position: ScoreKey | null;
  /** Cuts the fetched rows to the page and signs nextCursor from the last row kept. */
  finish<R extends { id: string; type: string; score: string }, T>(rows: R[], map: (row: R) => T): PageResult<T>;
}

const SCORE_RE = /^\d+(\.\d+)?$/;

function encodeScoreCursor(secret: string, query: string, key: ScoreKey): string {
  return sealCursor(secret, { v: 3, q: query, s: key.score, i: key.id, y: key.type });
}

function decodeScoreCursor(secret: string, query: string, cursor: string): ScoreKey {
  const bad = (why: string) => invalidField('/cursor', why);
  const body = openCursor<{ v?: unknown; q?: unknown; s?: unknown; i?: unknown; y?: unknown } | null>(secret, cursor, 512); // not a contract limit
  if (body?.v !== 3 || typeof body.s !== 'string' || !SCORE_RE.test(body.s) || typeof body.i !== 'string' || typeof body.y !== 'string') {
    throw bad('is not a cursor from this API');
  }
  if (body.q !== query) throw bad('belongs to another list or other filters; start again without a cursor');
  return { score: body.s, id: body.i, type: body.y };
}

/** Like startPage, for rows ordered by a computed score (descending), then id and type (ascending). */
export async function startScorePage(
  db: Db,
  input: PageInput,
  operation: string,
  filters: Record<string, unknown> = {},
): Promise<ScorePageWindow> {
  const { pageSize, secret, query, position } = await openWindow(db, input, operation, filters, decodeScoreCursor);
  return {
    fetch: pageSize + 1,
    pageSize,
    position,
    finish(rows, map) {
      return cutPage(rows, pageSize, map, (last) => encodeScoreCursor(secret, query, { score: last.score, id: last.id, type: last.type }));
    },
  };
}

/**
 * A keyset page in an order of the list's own (not createdAt desc, id desc): the window, with the
 * position as a (ts, id) key, and `finish`, which cuts the rows and signs the next cursor from the
 * key of the last row kept. The caller applies the position in its own WHERE and ORDER BY.
 */
export async function startKeyedPage(
  db: Db,
  input: PageInput,
  operation: string,
  filters: Record<string, unknown>,
): Promise<{
  readonly pageSize: number;
  readonly fetch: number;
  readonly position: PageKey | null;
  finish<R, T>(rows: R[], map: (row: R) => T, keyOf: (row: R) => PageKey): PageResult<T>;
}> {
  const { pageSize, secret, query, position } = await openWindow(db, input, operation, filters, decodeCursor);
  return {
    pageSize,
    fetch: pageSize + 1,
    position,
    finish: (rows, map, keyOf) => cutPage(rows, pageSize, map, (last) => encodeCursor(secret, query, keyOf(last))),
  };
}

// -------------------------------------------------------------------------------------------------
// Keyset paging by the events outbox sequence (events.list, runtime/events/feed.ts): v: 1 with the
// last event's sequence number in s.

function decodeSeqCursor(secret: string, query: string, cursor: string): number {
  const bad = (why: string) => invalidField('/cursor', why);
  const body = openCursor<{ v?: unknown; q?: unknown; s?: unknown } | null>(secret, cursor, 512); // not a contract limit
  if (body?.v !== 1 || typeof body.s !== 'number' || !Number.isSafeInteger(body.s)) throw bad('is not a cursor from this API');
  if (body.q !== query) throw bad('belongs to another list or other filters; start again without a cursor');
  return body.s;
}

/** The window of a list paged by a sequence number: the position (the last seq seen) and a cursor sealer. */
export async function startSeqPage(
  db: Db,
  input: PageInput,
  operation: string,
  filters: Record<string, unknown>,
): Promise<{ readonly pageSize: number; readonly position: number | null; cursorFor(seq: number): string }> {
  const { pageSize, secret, query, position } = await openWindow(db, input, operation, filters, decodeSeqCursor);
  return { pageSize, position, cursorFor: (seq) => sealCursor(secret, { v: 1, q: query, s: seq }) };
}
