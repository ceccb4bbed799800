// Request id and W3C trace context (traceparent). A valid incoming traceparent is propagated: its
// trace id and flags are kept and this service's span becomes the parent id. An invalid one (bad
// shape, all-zero trace or parent id, version ff) starts a new trace.
import { randomBytes } from 'node:crypto';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export interface TraceContext {
  traceId: string;
  /** This service's span id (sent as the parent id of the response's traceparent). */
  spanId: string;
  /** The caller's span id when a valid traceparent came in. */
  parentId: string | null;
  flags: string;
  /** The traceparent header to send back. */
  header: string;
}

export interface ParsedTraceparent {
  version: string;
  traceId: string;
  parentId: string;
  flags: string;
}

/** Parses a traceparent header; null when absent or invalid per W3C Trace Context. */
export function parseTraceparent(value: string | null | undefined): ParsedTraceparent | null {
  if (!value) return null;
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return null;
  const [, version, traceId, parentId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff') return null;
  // Version 00 has exactly four fields; a future version may append more.
  if (version === '00' && rest !== undefined) return null;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return null;
  return { version, traceId, parentId, flags };
}

// Random bytes come from a pool refilled 4 KiB at a time: one system call per ~100 requests.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;
function take(bytes: number): Buffer {
  if (offset + bytes > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const out = pool.subarray(offset, offset + bytes);
  offset += bytes;
  return out;
}

function hex(bytes: number, zero: string): string {
  for (;;) {
    const id = take(bytes).toString('hex');
    if (id !== zero) return id;
  }
}

export function traceContext(incoming: string | null | undefined): TraceContext {
  const parsed = parseTraceparent(incoming);
  const spanId = hex(8, ZERO_SPAN);
  const traceId = parsed?.traceId ?? hex(16, ZERO_TRACE);
  // Only the sampled bit is defined; keep it from the caller, sample new traces.
  const flags = parsed ? (parseInt(parsed.flags, 16) & 1 ? '01' : '00') : '01';
  return { traceId, spanId, parentId: parsed?.parentId ?? null, flags, header: `00-${traceId}-${spanId}-${flags}` };
}

/** A caller's X-Request-Id is kept when it is a short token; otherwise a new id is made. */
export function requestIdFrom(incoming: string | null | undefined): string {
  if (incoming && REQUEST_ID.test(incoming)) return incoming;
  return newRequestId();
}

export function newRequestId(): string {
  return `req_${take(12).toString('base64url')}`;
}
