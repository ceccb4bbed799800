// generated/registry.ts: the operation registry the runtime reads (never the YAML).
import type { Model } from '../model.ts';
import { literal, TS_HEADER } from './format.ts';

export function emitRegistry(model: Model): string {
  return `${TS_HEADER}import type { JsonSchema, OperationDef, ServiceDef } from '../runtime/contract-types.ts';
import type { Limits, ProblemCode } from './contract.ts';

/** This contract's service facts, typed by its own limits and problem codes. */
export type Service = ServiceDef<Limits, ProblemCode>;

export const service: Service = ${literal(model.service)};

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
`;
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
