// Input validation: REST strings coerced by the operation's parameter types, then the ajv validator
// generated from the contract's input schema. Every failing field is reported with a JSON pointer.
import type { OperationDef } from '../contract-types.ts';
import { ProblemError, validationFailed, type FieldError } from '../problem-error.ts';

/** The shape of an ajv ValidateFunction (generated/validators). */
export interface ValidateFn {
  (data: unknown): boolean;
  errors?: AjvErrorLike[] | null;
}

export interface AjvErrorLike {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** ajv errors -> one FieldError per failing field (deduplicated, in ajv's order). */
export function fieldErrors(errors: readonly AjvErrorLike[] | null | undefined): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    let pointer = e.instancePath;
    let message = e.message ?? 'is not valid';
    if (e.keyword === 'required' && typeof e.params.missingProperty === 'string') {
      pointer = `${e.instancePath}/${escapePointer(e.params.missingProperty)}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') {
      pointer = `${e.instancePath}/${escapePointer(e.params.additionalProperty)}`;
      message = 'is not a known field';
    } else if (e.keyword === 'unevaluatedProperties' && typeof e.params.unevaluatedProperty === 'string') {
      pointer = `${e.instancePath}/${escapePointer(e.params.unevaluatedProperty)}`;
      message = 'is not a known field';
    } else if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) {
      message = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    }
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ pointer, message });
  }
  return out;
}

export { validationFailed };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored as text, or null: U+0000 (PostgreSQL text refuses it), lone surrogates. */
function badText(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain the character U+0000';
  if (LONE_SURROGATE.test(value)) return 'holds a lone UTF-16 surrogate, which is not a Unicode character';
  return null;
}

/**
 * The validator's rule for every value of every input, REST and MCP alike, run before any
 * recursive work: nesting at most maxDepth levels (the input object is level 1), no string or
 * member name holding U+0000 or a lone surrogate, no `__proto__` member. Iterative, so a deep
 * value cannot overflow the stack. Returns the failing fields (empty when none).
 */
export function checkInputValues(input: unknown, maxDepth: number): FieldError[] {
  const errors: FieldError[] = [];
  const stack: { value: unknown; pointer: string; depth: number }[] = [{ value: input, pointer: '', depth: 1 }];
  while (stack.length > 0 && errors.length < 50) {
    const { value, pointer, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const why = badText(value);
      if (why) errors.push({ pointer, message: why });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > maxDepth) {
      errors.push({ pointer, message: `nests deeper than ${maxDepth} levels (limits.maxJsonDepth)` });
      continue;
    }
    const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [name, child] = entries[i]!;
      const at = `${pointer}/${escapePointer(name)}`;
      if (!Array.isArray(value)) {
        if (name === '__proto__') {
          errors.push({ pointer: at, message: 'is not a field of any input: a member named __proto__ is never accepted' });
          continue;
        }
        const why = badText(name);
        if (why) {
          errors.push({ pointer: at, message: `the member name ${why}` });
          continue;
        }
      }
      stack.push({ value: child, pointer: at, depth: depth + 1 });
    }
  }
  return errors;
}

/**
 * Validates (a copy of) input with the operation's validator; returns the validated value (with
 * schema defaults applied when the validator applies them). Throws validation_failed. The values
 * rule (checkInputValues) runs first, so nothing deep or unstorable reaches structuredClone or ajv.
 */
export function validateInput(op: OperationDef, validate: ValidateFn, input: Record<string, unknown>, maxDepth: number): Record<string, unknown> {
  const refused = checkInputValues(input, maxDepth);
  if (refused.length > 0) throw validationFailed(refused);
  // An empty input (most reads without parameters) has nothing a validator could change in place.
  const data = isEmptyObject(input) ? {} : structuredClone(input);
  if (validate(data)) return data;
  const errors = fieldErrors(validate.errors);
  throw validationFailed(errors.length > 0 ? errors : [{ pointer: '', message: `is not a valid input of ${op.id}` }]);
}

function isEmptyObject(value: Record<string, unknown>): boolean {
  return Object.getPrototypeOf(value) === Object.prototype && Object.getOwnPropertyNames(value).length === 0;
}

function coerceScalar(value: string, type: string): unknown {
  switch (type) {
    case 'integer':
      return /^-?\d+$/.test(value) ? Number(value) : value;
    case 'number':
      return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    case 'null':
      return value === '' || value === 'null' ? null : value;
    default:
      return value;
  }
}

/**
 * Query and path values arrive as strings (or repeated strings); turn them into the JSON types of
 * op.paramTypes so the schema sees numbers and booleans. Arrays accept repeated parameters and
 * comma-separated values. A value that does not parse is left as it is, for ajv to report.
 */
export function coerceParams(op: OperationDef, raw: Record<string, string | string[]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    const type = (Object.hasOwn(op.paramTypes, name) ? op.paramTypes[name] : undefined) ?? 'string';
    let coerced: unknown;
    if (type === 'array') {
      coerced = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(',')).filter((v) => v !== '');
    } else {
      const single = Array.isArray(value) ? (value.length === 1 ? value[0]! : value) : value;
      coerced = typeof single === 'string' ? coerceScalar(single, type) : single;
    }
    // A data property even for `__proto__`, so the validator sees (and refuses) it.
    Object.defineProperty(out, name, { value: coerced, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
