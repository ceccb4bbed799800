// Input validation: REST strings coerced by the operation's parameter types, then the ajv validator
// generated from the contract's input schema. Every failing field is reported with a JSON pointer.
import type { OperationDef } from '../contract-types.ts';
import { ProblemError, type FieldError } from '../problem-error.ts';

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

export function validationFailed(errors: FieldError[]): ProblemError {
  const detail = errors.map((e) => `${e.pointer || '(input)'} ${e.message}`).join('; ');
  return new ProblemError('validation_failed', detail || 'The input is not valid.', { errors });
}

/**
 * Validates (a copy of) input with the operation's validator; returns the validated value (with
 * schema defaults applied when the validator applies them). Throws validation_failed.
 */
export function validateInput(op: OperationDef, validate: ValidateFn, input: Record<string, unknown>): Record<string, unknown> {
  const data = structuredClone(input);
  if (validate(data)) return data;
  const errors = fieldErrors(validate.errors);
  throw validationFailed(errors.length > 0 ? errors : [{ pointer: '', message: `is not a valid input of ${op.id}` }]);
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
    const type = op.paramTypes[name] ?? 'string';
    if (type === 'array') {
      const list = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(',')).filter((v) => v !== '');
      out[name] = list;
    } else {
      const single = Array.isArray(value) ? (value.length === 1 ? value[0]! : value) : value;
      out[name] = typeof single === 'string' ? coerceScalar(single, type) : single;
    }
  }
  return out;
}
