// The problem catalogue at run time: ProblemError (or anything thrown) -> RFC 9457 document.
// Shared by REST (runtime/http/rest) and MCP (runtime/mcp): both render the same members, MCP as an
// isError tool result, REST as application/problem+json.
//
// The catalogue is the contract's (the registry's service.problems, compiled from svc.yaml and
// installed at start, runtime/contract-facts.ts); the runtime keeps no copy of it, and ProblemError
// takes only a ProblemCode, so an unknown code is a type error.
import type { ProblemDef } from './contract-types.ts';
import { contractFacts } from './contract-facts.ts';
import { ProblemError, type FieldError, type ProblemCode } from './problem-error.ts';

export type { ProblemCode };

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

/** The installed contract's problem codes, in its order. */
export function problemCodes(): ProblemCode[] {
  return Object.keys(catalogue()) as ProblemCode[];
}

export function problemDef(code: ProblemCode): ProblemDef {
  return catalogue()[code]!;
}

/** Whether code is one of the contract's problem codes (a code read back from storage, say). */
export function isProblemCode(code: string): code is ProblemCode {
  return Object.hasOwn(catalogue(), code);
}

function catalogue(): Readonly<Record<string, ProblemDef>> {
  return contractFacts().problems;
}

/** Whether a retry is sensible: after_fix -> false; after_delay and now -> true. */
export function retryable(code: ProblemCode): boolean {
  return problemDef(code).retry !== 'after_fix';
}

/**
 * Anything thrown -> a ProblemError. A ProblemError with a code the catalogue does not know, and
 * every other exception, becomes internal_error whose detail says nothing about internals.
 */
export function toProblemError(err: unknown): ProblemError {
  if (err instanceof ProblemError && isProblemCode(err.code)) return err;
  return new ProblemError('internal_error', 'An unexpected error occurred. Quote the requestId when reporting it.');
}

/** True when err is not a known ProblemError (so it is worth logging as a bug). */
export function isUnexpected(err: unknown): boolean {
  return !(err instanceof ProblemError && isProblemCode(err.code));
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

/** A ProblemRecord (the contract's shape for a problem kept on a run, step, operation or job). */
export function problemRecord(code: ProblemCode, detail: string, baseUrl = ''): Record<string, unknown> {
  const def = problemDef(code);
  return { type: `${baseUrl}/problems/${code}`, title: def.title, status: def.status, code, detail, instance: null, requestId: null, retryable: def.retry !== 'after_fix' };
}
