// The problem catalogue at run time: ProblemError (or anything thrown) -> RFC 9457 document.
// Shared by REST (runtime/rest) and MCP (runtime/mcp): both render the same members, MCP as an
// isError tool result, REST as application/problem+json.
//
// The catalogue comes from the generated registry (service.problems, compiled from svc.yaml).
// createApp registers it; the codes the runtime itself throws have a built-in fallback so a
// failure before the registry is loaded is still a well-formed problem.
import type { ProblemDef, RetryClass } from './contract-types.ts';
import { ProblemError, type FieldError } from './problem-error.ts';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** An RFC 9457 problem document as svc publishes it. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance: string;
  requestId: string;
  retryable: boolean;
  errors?: FieldError[];
  [extra: string]: unknown;
}

// Used only until the generated catalogue is registered (and for codes a stale registry lacks).
const FALLBACK: Record<string, [number, string, RetryClass, number | null]> = {
  validation_failed: [422, 'The input is not valid', 'after_fix', null],
  malformed_json: [400, 'The request body is not valid JSON', 'after_fix', null],
  idempotency_key_required: [400, 'An idempotency key is required', 'after_fix', null],
  idempotency_key_reused: [422, 'The Idempotency-Key was already used with a different request', 'after_fix', null],
  idempotency_key_in_progress: [409, 'A request with this Idempotency-Key is still in progress', 'after_delay', null],
  unauthorized: [401, 'A credential is required', 'after_fix', null],
  invalid_token: [401, 'The credential was refused', 'after_fix', null],
  insufficient_scope: [403, 'The credential lacks the scope this operation needs', 'after_fix', null],
  forbidden: [403, 'This caller may not perform this operation', 'after_fix', null],
  not_found: [404, 'Not found', 'after_fix', null],
  method_not_allowed: [405, 'Method not allowed on this path', 'after_fix', null],
  conflict: [409, 'The request conflicts with the current state', 'after_fix', null],
  invalid_transition: [409, "The resource's state does not allow this transition", 'after_fix', null],
  precondition_failed: [412, 'The If-Match ETag does not match the current version', 'after_fix', null],
  payload_too_large: [413, 'The request body is too large', 'after_fix', null],
  unsupported_media_type: [415, 'The request body must be application/json', 'after_fix', null],
  precondition_required: [428, 'An If-Match header with the current ETag is required', 'after_fix', null],
  rate_limited: [429, 'Too many requests', 'after_delay', null],
  internal_error: [500, 'Internal error', 'now', null],
  not_implemented: [501, 'This operation is not implemented yet', 'after_fix', null],
  not_configured: [503, 'Token verification has no usable key set', 'after_delay', 30],
  unavailable: [503, 'The service is temporarily unavailable', 'after_delay', 5],
};

let catalogue: Record<string, ProblemDef> = Object.fromEntries(
  Object.entries(FALLBACK).map(([code, [status, title, retry, retryAfter]]) => [code, { code, status, title, retry, retryAfter }]),
);

/** Registers the generated catalogue (service.problems). Called by createApp. */
export function registerProblemCatalogue(problems: Record<string, ProblemDef>): void {
  catalogue = { ...catalogue, ...problems };
}

export function problemDef(code: string): ProblemDef {
  return catalogue[code] ?? catalogue.internal_error!;
}

export function problemCodes(): string[] {
  return Object.keys(catalogue).sort();
}

/** Whether a retry is sensible: after_fix -> false; after_delay and now -> true. */
export function retryable(code: string): boolean {
  return problemDef(code).retry !== 'after_fix';
}

/**
 * Anything thrown -> a ProblemError. A ProblemError with a code the catalogue does not know, and
 * every other exception, becomes internal_error whose detail says nothing about internals.
 */
export function toProblemError(err: unknown): ProblemError {
  if (err instanceof ProblemError && catalogue[err.code]) return err;
  return new ProblemError('internal_error', 'An unexpected error occurred. Quote the requestId when reporting it.');
}

/** True when err is not a known ProblemError (so it is worth logging as a bug). */
export function isUnexpected(err: unknown): boolean {
  return !(err instanceof ProblemError && catalogue[err.code]);
}

/** The RFC 9457 document for err. `instance` is the request path (never carrying personal data). */
export function problemBody(err: unknown, instance: string, requestId: string, baseUrl: string): ProblemDocument {
  const problem = toProblemError(err);
  const def = problemDef(problem.code);
  const body: ProblemDocument = {
    // Extra members first so they can never override the standard ones.
    ...problem.extra,
    type: `${baseUrl}/problems/${problem.code}`,
    title: def.title,
    status: def.status,
    detail: problem.detail,
    code: problem.code,
    instance,
    requestId,
    retryable: def.retry !== 'after_fix',
  };
  if (problem.errors.length > 0 || problem.code === 'validation_failed') body.errors = problem.errors;
  return body;
}

/** Headers a problem response carries: the error's own, plus Retry-After where a time applies. */
export function problemHeaders(err: unknown): Record<string, string> {
  const problem = toProblemError(err);
  const def = problemDef(problem.code);
  const headers: Record<string, string> = { ...problem.headers };
  if (!hasHeader(headers, 'retry-after') && def.retryAfter !== null) headers['Retry-After'] = String(def.retryAfter);
  return headers;
}

export function problemStatus(err: unknown): number {
  return problemDef(toProblemError(err).code).status;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((h) => h.toLowerCase() === name);
}

/** 403 insufficient_scope naming the scope. */
export function insufficientScope(scope: string, operationId: string): ProblemError {
  return new ProblemError('insufficient_scope', `${operationId} needs the scope ${scope}, which this credential does not hold.`, {
    extra: { requiredScope: scope },
  });
}
