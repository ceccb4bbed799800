// generated/registry.ts: the operation registry the runtime reads (never the YAML).
import type { JsonSchema, OperationDef } from '../../runtime/contract-types.ts';
import type { FamilyModel, Model, ModelOperation } from '../model.ts';
import { identityMemo, onForget, session } from '../session.ts';
import { literal, TS_HEADER } from './format.ts';
import { arrayParts, elementsText, inLiteralOrder, member, operationsByFamily, recordLiteral, recordLiteralParts, recordParts, type Member } from './literal-pieces.ts';
import { pieceCache, type GeneratedText } from './pieces.ts';

// One compile makes each large literal whole (format.ts `literal`), as it always has. A watcher puts
// the file together from the texts it keeps (session.ts memos, literal-pieces.ts) of each family, schema and
// operation while that object is the same (model.ts says when it is), and makes the small global
// parts (service, the sorted name lists) each time. Each memo's key is all its text reads:

/**
 * A family's run of `operations` elements: reads its operations' defs (the family is the same object
 * while they are). An edited family's operations are all new objects (its file is parsed again), so
 * a run is kept whole or made again whole.
 */
const familyRuns = identityMemo<FamilyModel, string>();
/** An operation's element of `operations`, when the families are not model.operations in order: reads the def. */
const defTexts = identityMemo<OperationDef, string>();
/**
 * A schema's member of `schemas` and the names marked inside it: both read that schema object only
 * (its $refs are names, not followed), and the member its name: kept with the first name it has, and
 * made again under any other.
 */
const schemaParts = identityMemo<object, SchemaPart>();
/**
 * An operation's member of `secretPointers` (null: no secrets). Read: its output schema, and the
 * contract schemas its $refs reach (a family's $refs name contract schemas only, check.ts). The
 * operation is the same object only while its family file, svc.yaml and the schema files are
 * (model.ts), so the contract schemas are the same; the output schema is compared too, as another
 * family's operation whose id has the same Pascal form would replace it in model.schemas.
 */
const secretMembers = identityMemo<ModelOperation, { output: JsonSchema | undefined; member: Member | null }>();
/** A family's member of `familyDescriptions`: reads the family's name and description. */
const familyMembers = identityMemo<FamilyModel, Member>();

/** registry.ts's pieces in a watcher (pieces.ts): the kept runs of operations and schemas are encoded once. */
const registryPieces = pieceCache();

export function emitRegistry(model: Model): GeneratedText {
  const schemas = session.longLived ? schemasPass(model.schemas) : null;
  const parts = [
    `${TS_HEADER}import type { JsonSchema, OperationDef, ServiceDef } from 'svc/runtime/contract-types.ts';
import { problemCatalogue, type Limits, type ProblemCode } from './contract.ts';

/** This contract's service facts, typed by its own limits and problem codes. */
export type Service = ServiceDef<Limits, ProblemCode>;

/** The problem catalogue is contract.ts's problemCatalogue, not a second copy. */
export const service: Service = ${serviceLiteral(model)};

export const operations: readonly OperationDef[] = `,
    ...(session.longLived ? operationsLiteral(model) : [literal(model.operations.map((o) => o.def))]),
    `;

export const operationsById: Readonly<Record<string, OperationDef>> = Object.freeze(
  Object.fromEntries(operations.map((operation) => [operation.id, operation])),
);

/** Component schemas (refs are #/components/schemas/<Name>), as in openapi.json. */
export const schemas: Readonly<Record<string, JsonSchema>> = `,
    ...(schemas ? schemasLiteral(schemas) : [literal(model.schemas)]),
    `;

/**
 * JSON pointers of the bearer secrets (x-svc-secret: true) in each operation's result or output,
 * \`*\` standing for any array index. Operations without secrets are absent.
 */
export const secretPointers: Readonly<Record<string, readonly string[]>> = ${secretPointersLiteral(model)};

/** Each family's one-line description (the OpenAPI document's tags), e.g. for the dynamic MCP mode's search. */
export const familyDescriptions: Readonly<Record<string, string>> = ${session.longLived ? familyDescriptionsLiteral(model) : literal(Object.fromEntries(model.families.map((f) => [f.name, f.description])))};

/** Property names marked x-svc-secret or x-svc-personal anywhere in the schemas: logs write them as "[redacted]". */
export const redactedFieldNames: readonly string[] = ${literal(markedFieldNames(model.schemas, schemas))};
`,
  ];
  return session.longLived ? registryPieces(parts) : parts.join('');
}

/** A watcher's `literal` of the operations' defs: each family's run when the families are model.operations in order (literal-pieces.ts), else each def's. */
function operationsLiteral(model: Model): string[] {
  const families = operationsByFamily(model);
  if (!families) return arrayParts(model.operations.map(({ def }) => defTexts.get(def) ?? defTexts.set(def, elementsText([def]))));
  const runs: string[] = [];
  for (const f of families)
    if (f.operations.length) runs.push(familyRuns.get(f) ?? familyRuns.set(f, elementsText(f.operations.map((o) => o.def))));
  return arrayParts(runs);
}

/** A schema's member of `schemas` (key: its name) and the names marked in it. */
interface SchemaPart extends Member {
  /** markedIn(schema), null when none */
  marked: readonly string[] | null;
}

function schemaPart(name: string, schema: unknown): SchemaPart {
  const object = schema !== null && typeof schema === 'object';
  const kept = object ? schemaParts.get(schema) : undefined;
  if (kept && kept.key === name) return kept;
  const marked = kept ? kept.marked : markedIn(schema);
  const part = { ...member(name, schema), marked: marked?.length ? marked : null };
  // Kept under the first name it has: one schema under two names is made again under the other.
  return object && !kept ? schemaParts.set(schema, part) : part;
}

/**
 * model.schemas, position by position (undefined values left out, as literal does): each schema's
 * name, value, member text and marked names, and whether the names are in literal's order.
 */
interface SchemasPass {
  names: string[];
  values: unknown[];
  texts: string[];
  marks: (readonly string[] | null)[];
  ordered: boolean;
}

/**
 * A watcher's last pass: a schema at the position, and under the name, it had then is given the
 * texts it had (a member's text reads its name and value only), without a lookup; names all where
 * they were are in the order they were. The watcher's compiles keep nearly every schema in place.
 */
let lastPass: SchemasPass | null = null;
onForget(() => {
  lastPass = null;
});

/** A watcher's pass over model.schemas. */
function schemasPass(schemas: Record<string, unknown>): SchemasPass {
  const last = lastPass;
  const pass: SchemasPass = { names: [], values: [], texts: [], marks: [], ordered: false };
  let namesInPlace = last !== null;
  let i = 0;
  // for-in, not Object.entries: a third of the time on a record of 16,000 schemas. The record is a
  // plain object, so for-in lists its own keys, those literal's Object.keys lists.
  for (const name in schemas) {
    const schema = schemas[name];
    if (schema === undefined) continue;
    if (last && name === last.names[i] && schema === last.values[i]) {
      pass.texts.push(last.texts[i]!);
      pass.marks.push(last.marks[i]!);
    } else {
      if (name !== last?.names[i]) namesInPlace = false;
      const part = schemaPart(name, schema);
      pass.texts.push(part.text);
      pass.marks.push(part.marked);
    }
    pass.names.push(name);
    pass.values.push(schema);
    i++;
  }
  pass.ordered = last && namesInPlace && i === last.names.length ? last.ordered : inLiteralOrder(pass.names);
  lastPass = pass;
  return pass;
}

/** `literal(schemas)` of a pass. */
function schemasLiteral(pass: SchemasPass): string[] {
  return pass.ordered ? recordParts(pass.texts) : recordLiteralParts(pass.names.map((key, i) => ({ key, text: pass.texts[i]! })));
}

/** Property names marked x-svc-secret or x-svc-personal anywhere in the schemas, sorted: from a pass's marks, or walking the record. */
function markedFieldNames(schemas: Record<string, unknown>, pass: SchemasPass | null): string[] {
  if (!pass) return [...new Set(markedIn(schemas))].sort();
  // The record is walked as a node too: a schema named "properties" is read as its properties.
  const names = new Set(markedIn({ properties: schemas.properties }, false));
  for (const marked of pass.marks) if (marked) for (const name of marked) names.add(name);
  return [...names].sort();
}

/** The marked names of the properties in node, at any depth (deep false: node's own properties only). */
function markedIn(node: unknown, deep = true): string[] {
  const names: string[] = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(walk);
    const props = (node as { properties?: Record<string, Record<string, unknown>> }).properties;
    if (props && typeof props === 'object') {
      for (const [name, sub] of Object.entries(props)) if (sub?.['x-svc-secret'] === true || sub?.['x-svc-personal'] === true) names.push(name);
    }
    if (deep) for (const v of Object.values(node)) walk(v);
  };
  walk(node);
  return names;
}

function familyDescriptionsLiteral(model: Model): string {
  return recordLiteral(model.families.map((f) => familyMembers.get(f) ?? familyMembers.set(f, member(f.name, f.description))));
}

/** model.service as a literal whose problems property names problemCatalogue. */
function serviceLiteral(model: Model): string {
  const { problems: _problems, ...rest } = model.service;
  const text = literal(rest);
  return `${text.slice(0, text.lastIndexOf('}')).trimEnd()},\n  "problems": problemCatalogue\n}`;
}

/** `literal` of each operation's secret pointers (in its result or output); operations without any are absent. */
function secretPointersLiteral(model: Model): string {
  const members: Member[] = [];
  for (const o of model.operations) {
    const output = model.schemas[o.outputName];
    let kept = secretMembers.get(o);
    if (!kept || kept.output !== output) {
      const found = [...new Set(secretsIn(model.schemas, output, '', new Set()))].sort();
      kept = secretMembers.set(o, { output, member: found.length ? member(o.def.id, found) : null });
    }
    if (kept.member !== null) members.push(kept.member);
  }
  return recordLiteral(members);
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
