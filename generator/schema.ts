// JSON Schema transformations: contract form -> component form, dereferencing, stripping extensions.
import type { JsonSchema } from '../runtime/contract-types.ts';
import { isObj, type Obj } from './raw.ts';

export const COMPONENT_PREFIX = '#/components/schemas/';

/** Keywords whose value is a map of name -> schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is one schema. */
const SCHEMA_VALUED = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

/**
 * A JSON copy (what JSON.parse(JSON.stringify(value)) gives for the plain data YAML produces), walked
 * by hand: the data keywords it copies (enum, required, examples) are small, and a round trip through
 * a string per value cost more than the copy. Non-finite numbers become null, -0 becomes 0, an
 * undefined member is dropped (null in a list); anything with toJSON (a Date) takes the round trip.
 */
function clone<T>(value: T): T {
  return value === undefined ? value : (copyJson(value) as T);
}

function copyJson(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : null;
  if (typeof value !== 'object') return undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.parse(JSON.stringify(value)) as unknown;
  if (Array.isArray(value)) return value.map((item) => copyJson(item) ?? null);
  const out: Obj = {};
  for (const key of Object.keys(value)) {
    const copied = copyJson((value as Obj)[key]);
    if (copied !== undefined) out[key] = copied;
  }
  return out;
}

/**
 * Rebuilds a schema bottom-up: subschemas are mapped first, then `visit` sees each schema node with
 * its subschemas already rebuilt. Data keywords (enum, const, default, examples) are copied as they are.
 */
export function mapSchema(node: unknown, visit: (schema: Obj) => Obj): unknown {
  if (!isObj(node)) return clone(node);
  const out: Obj = {};
  for (const [key, value] of Object.entries(node)) {
    if (SCHEMA_MAPS.has(key) && isObj(value)) {
      const mapped: Obj = {};
      for (const [name, sub] of Object.entries(value)) mapped[name] = mapSchema(sub, visit);
      out[key] = mapped;
    } else if (SCHEMA_VALUED.has(key) && isObj(value)) {
      out[key] = mapSchema(value, visit);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((sub) => mapSchema(sub, visit));
    } else {
      out[key] = clone(value);
    }
  }
  return visit(out);
}

/** Contract form -> component form: `$ref: Task` -> `#/components/schemas/Task`, `decision` -> `x-svc-decision`. */
export function toComponentForm(schema: unknown): JsonSchema {
  return mapSchema(schema, (node) => {
    const out: Obj = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) out.$ref = COMPONENT_PREFIX + value;
      else if (key === 'decision') out['x-svc-decision'] = value;
      else out[key] = value;
    }
    return out;
  }) as JsonSchema;
}

/** Removes x-svc-* and decision keys everywhere (for MCP schemas and validators). */
export function stripExtensions(schema: unknown): JsonSchema {
  return mapSchema(schema, (node) => {
    const out: Obj = {};
    for (const [key, value] of Object.entries(node)) if (!key.startsWith('x-svc-') && key !== 'decision') out[key] = value;
    return out;
  }) as JsonSchema;
}

/**
 * Inlines every `#/components/schemas/X` reference. Each component is dereferenced once and cached,
 * so dereferencing many operations stays linear in the size of the output. A recursive reference is
 * replaced by an unconstrained schema (JSON Schema without $ref cannot express recursion).
 * What deref returns shares its subschemas with the cache (and with every other result that
 * inlines the same component): a caller reads it or copies it (stripExtensions), never changes it.
 */
export class Dereferencer {
  private readonly cache = new Map<string, JsonSchema>();
  private readonly active = new Set<string>();
  constructor(private readonly components: Record<string, JsonSchema>) {}

  component(name: string): JsonSchema {
    const hit = this.cache.get(name);
    if (hit) return hit;
    if (this.active.has(name)) return { description: `Recursive reference to ${name}.` };
    this.active.add(name);
    const result = this.deref(this.components[name] ?? {});
    this.active.delete(name);
    this.cache.set(name, result);
    return result;
  }

  deref(schema: unknown): JsonSchema {
    return mapSchema(schema, (node) => {
      const ref = node.$ref;
      if (typeof ref !== 'string' || !ref.startsWith(COMPONENT_PREFIX)) return node;
      const { $ref: _drop, ...siblings } = node;
      return { ...this.component(ref.slice(COMPONENT_PREFIX.length)), ...siblings };
    }) as JsonSchema;
  }

  /**
   * The schema's own keywords as deref would give them (a top-level reference followed, its siblings
   * over the component's), with its subschemas left as they are: enough for what reads only the top
   * (a parameter's type, a result's type and required members), without inlining the rest.
   */
  top(schema: unknown, active: ReadonlySet<string> = new Set()): JsonSchema {
    if (!isObj(schema)) return schema as JsonSchema;
    const ref = schema.$ref;
    if (typeof ref !== 'string' || !ref.startsWith(COMPONENT_PREFIX)) return schema as JsonSchema;
    const { $ref: _drop, ...siblings } = schema;
    const name = ref.slice(COMPONENT_PREFIX.length);
    const target = active.has(name) ? { description: `Recursive reference to ${name}.` } : this.top(this.components[name] ?? {}, new Set([...active, name]));
    return { ...target, ...siblings } as JsonSchema;
  }
}

/** The JSON type name of a (dereferenced) schema, for coercing path and query strings. */
export function jsonTypeOf(schema: JsonSchema): string {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return String(t.find((x) => x !== 'null') ?? 'string');
  if (Array.isArray(schema.enum) && schema.enum.length) {
    const v = schema.enum[0];
    return typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v === 'boolean' ? 'boolean' : 'string';
  }
  return 'string';
}
