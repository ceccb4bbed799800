// The one way handlers and runtime stages fail: throw a ProblemError with a contract problem code.
// The code is a ProblemCode: the contract's codes once the generated contract registers them (below),
// so a code the contract does not define does not compile. The response stage turns it into an
// RFC 9457 document (REST) or an isError tool result (MCP).

/**
 * Where the generated contract registers its problem codes (generator/emit/contract.ts emits
 * `declare module '../runtime/problem-error.ts' { interface ProblemCodeRegistry { code: ProblemCode } }`).
 * The runtime imports nothing from generated/: with no contract in the program a code is any string.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ProblemCodeRegistry {}

/** A problem code: the registered contract's union, or any string when none is registered. */
export type ProblemCode = ProblemCodeRegistry extends { code: infer C extends string } ? C : string;

export interface FieldError {
  /** JSON pointer into the operation's input, e.g. /clientId or /tasks/0/title. */
  pointer: string;
  message: string;
}

export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly detail: string;
  readonly errors: FieldError[];
  readonly headers: Record<string, string>;
  /** Extra members of the problem document (e.g. sign_in, request_access, requiredScope). */
  readonly extra: Record<string, unknown>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: { errors?: FieldError[]; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
  ) {
    super(`${code}: ${detail}`);
    this.name = 'ProblemError';
    this.code = code;
    this.detail = detail;
    this.errors = options.errors ?? [];
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

/**
 * validation_failed, its one home: every field error in `errors` (JSON pointer and message), the
 * detail `/pointer: message; …` unless a detail is given. Used by the pipeline, both transports and handlers.
 */
export function validationFailed(errors: FieldError[], detail?: string): ProblemError {
  const listed = errors.map((e) => `${e.pointer || '(input)'}: ${e.message}`).join('; ');
  return new ProblemError('validation_failed', detail ?? (listed || 'The input is not valid.'), { errors });
}

/** validation_failed for one field. */
export function invalidField(pointer: string, message: string): ProblemError {
  return validationFailed([{ pointer, message }]);
}

export function notFound(what: string): ProblemError {
  return new ProblemError('not_found', `${what} was not found or is not yours.`);
}
