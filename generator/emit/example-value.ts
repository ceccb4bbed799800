// A plausible value for a JSON Schema, for the guides' examples (docs-guides.ts): the schema's own
// `examples`, `default`, `const` or first enum value when it has one, otherwise a value of its type
// that its format, pattern and bounds accept. Deterministic: the same schema gives the same value,
// so generated/ does not change between runs. Objects get their required properties only.
import type { JsonSchema } from '../../runtime/contract-types.ts';
import { COMPONENT_PREFIX } from '../schema.ts';

type Schemas = Record<string, JsonSchema>;

const FORMATS: Record<string, string> = {
  'date-time': '2025-01-31T09:00:00Z',
  date: '2025-01-31',
  time: '09:00:00',
  email: 'someone@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
};

/** The schema a `$ref` names, followed until one is not a reference (a loop ends in an empty schema). */
function resolve(schema: JsonSchema, schemas: Schemas): JsonSchema {
  let at = schema;
  for (let hops = 0; typeof at.$ref === 'string'; hops++) {
    const next = hops < 16 ? schemas[at.$ref.replace(COMPONENT_PREFIX, '')] : undefined;
    if (!next) return {};
    at = { ...next, ...Object.fromEntries(Object.entries(at).filter(([k]) => k !== '$ref')) };
  }
  return at;
}

/** The literal characters a pattern starts with (after `^`), up to its first class or group. */
function literalPrefix(pattern: string): string {
  const m = /^\^((?:[A-Za-z0-9_-]|\\.)*)/.exec(pattern);
  return m ? m[1]!.replace(/\\(.)/g, '$1') : '';
}

/** A string the schema's pattern plausibly accepts: its literal prefix, then letters of the case its first class allows. */
function patternString(pattern: string): string {
  const prefix = literalPrefix(pattern);
  const rest = pattern.slice(1 + prefix.length);
  const cls = /^\[([^\]]*)\]/.exec(rest)?.[1] ?? '';
  const tail = cls.includes('a-z') || cls === '' ? 'example' : cls.includes('A-Z') ? 'EXAMPLE' : cls.includes('0-9') ? '1' : 'example';
  return prefix + tail;
}

function stringValue(schema: JsonSchema): string {
  if (typeof schema.format === 'string' && FORMATS[schema.format]) return FORMATS[schema.format]!;
  let value = typeof schema.pattern === 'string' && schema.pattern.startsWith('^') ? patternString(schema.pattern) : 'example';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  while (value.length < min) value += 'x';
  return value.slice(0, max);
}

function numberValue(schema: JsonSchema): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
  const max = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
  let value = Math.min(Math.max(1, min), max);
  const not = schema.not as JsonSchema | undefined;
  if (not && 'const' in not && not.const === value) value = value + 1 <= max ? value + 1 : value - 1;
  return value;
}

const TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean'] as const;

function typeOf(schema: JsonSchema): string | undefined {
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === 'string' ? [schema.type] : [];
  return TYPES.find((t) => types.includes(t)) ?? (schema.properties ? 'object' : undefined);
}

/** A value `schema` accepts, plausibly; `null` when the schema gives nothing to go on. */
export function exampleValue(given: JsonSchema | undefined, schemas: Schemas = {}): unknown {
  if (!given) return null;
  const schema = resolve(given, schemas);
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const variants = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(variants) && variants.length) return exampleValue(variants[0], schemas);
  switch (typeOf(schema)) {
    case 'object':
      return exampleObject(schema, schemas);
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return min > 0 ? Array.from({ length: min }, () => exampleValue(schema.items as JsonSchema | undefined, schemas)) : [];
    }
    case 'string':
      return stringValue(schema);
    case 'integer':
    case 'number':
      return numberValue(schema);
    case 'boolean':
      return true;
    default:
      return null;
  }
}

/** An object with the schema's required properties, each given its exampleValue, in the order the schema lists them. */
export function exampleObject(given: JsonSchema, schemas: Schemas = {}, leaveOut: readonly string[] = []): Record<string, unknown> {
  const schema = resolve(given, schemas);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) if (required.has(name) && !leaveOut.includes(name)) out[name] = exampleValue(property, schemas);
  return out;
}
