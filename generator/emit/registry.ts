// generated/registry.ts: the operation registry the runtime reads (never the YAML).
import type { Model } from '../model.ts';
import { literal, TS_HEADER } from './format.ts';

export function emitRegistry(model: Model): string {
  return `${TS_HEADER}import type { JsonSchema, OperationDef, ServiceDef } from '../runtime/contract-types.ts';
import { problemCatalogue, type Limits, type ProblemCode } from './contract.ts';

/** This contract's service facts, typed by its own limits and problem codes. */
export type Service = ServiceDef<Limits, ProblemCode>;

/** The problem catalogue is contract.ts's problemCatalogue, not a second copy. */
export const service: Service = ${serviceLiteral(model)};

export const operations: readonly OperationDef[] = ${literal(model.operations.map((o) => o.def))};

export const operationsById: Readonly<Record<string, OperationDef>> = Object.freeze(
  Object.fromEntries(operations.map((operation) => [operation.id, operation])),
);

/** Component schemas (refs are #/components/schemas/<Name>), as in openapi.json. */
export const schemas: Readonly<Record<string, JsonSchema>> = ${literal(model.schemas)};

/**
 * JSON pointers of the bearer secrets (x-svc-secret: true) in each operation's result or output,
 * \`*\` standing for any array index. Operations without secrets are absent.
 */
export const secretPointers: Readonly<Record<string, readonly string[]>> = ${literal(secretPointersOf(model))};

/** Each family's one-line description (the OpenAPI document's tags), e.g. for the dynamic MCP mode's search. */
export const familyDescriptions: Readonly<Record<string, string>> = ${literal(Object.fromEntries(model.families.map((f) => [f.name, f.description])))};

/** Property names marked x-svc-secret or x-svc-personal anywhere in the schemas: logs write them as "[redacted]". */
export const redactedFieldNames: readonly string[] = ${literal(markedFieldNames(model.schemas))};
`;
}

function markedFieldNames(schemas: Record<string, unknown>): string[] {
  const names = new Set<string>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(walk);
    const props = (node as { properties?: Record<string, Record<string, unknown>> }).properties;
    if (props && typeof props === 'object') {
      for (const [name, sub] of Object.entries(props)) if (sub?.['x-svc-secret'] === true || sub?.['x-svc-personal'] === true) names.add(name);
    }
    for (const v of Object.values(node)) walk(v);
  };
  walk(schemas);
  return [...names].sort();
}

/** model.service as a literal whose problems property names problemCatalogue. */
function serviceLiteral(model: Model): string {
  const { problems: _problems, ...rest } = model.service;
  const text = literal(rest);
  return `${text.slice(0, text.lastIndexOf('}')).trimEnd()},\n  "problems": problemCatalogue\n}`;
}

function secretPointersOf(model: Model): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const o of model.operations) {
    const found = [...new Set(secretsIn(model.schemas, model.schemas[o.outputName], '', new Set()))].sort();
    if (found.length) out[o.def.id] = found;
  }
  return out;
}

function secretsIn(schemas: Record<string, unknown>, node: unknown, at: string, seen: Set<string>): string[] {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return [];
  const n = node as Record<string, unknown>;
  if (n['x-svc-secret'] === true) return [at];
  const found: string[] = [];
  if (typeof n.$ref === 'string') {
    const name = n.$ref.split('/').pop()!;
    if (!seen.has(name)) found.push(...secretsIn(schemas, schemas[name], at, new Set([...seen, name])));
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'])
    if (Array.isArray(n[key])) for (const sub of n[key] as unknown[]) found.push(...secretsIn(schemas, sub, at, seen));
  if (n.properties && typeof n.properties === 'object')
    for (const [prop, sub] of Object.entries(n.properties as Record<string, unknown>))
      found.push(...secretsIn(schemas, sub, `${at}/${prop.replace(/~/g, '~0').replace(/\//g, '~1')}`, seen));
  if (n.items) found.push(...secretsIn(schemas, n.items, `${at}/*`, seen));
  return found;
}
