// Step 3: the ONE in-memory registry every emitter reads. No emitter sees YAML.
import {
  DEFAULT_MCP_TOOL_PREFIX,
  type HttpMethod,
  type JsonSchema,
  type OperationDef,
  type ParamLocation,
  type PrincipalKind,
  type ProblemDef,
  type RetryClass,
  type ServiceDef,
} from '../runtime/contract-types.ts';
import { checkContract } from './check.ts';
import { pageSchema, plannedOutcome, PROBLEM_SCHEMA, proposedOutcome } from './envelopes.ts';
import type { LoadedContract } from './load.ts';
import { guideExamplesOf, type GuideExamples } from './guide-examples.ts';
import { buildMcpTool } from './mcp.ts';
import { buildDynamicTools } from './mcp-dynamic.ts';
import { asArray, asObj, BODY_METHODS, inputProperties, isObj, pascal, pathParams, strings, type Obj } from './raw.ts';
import { COMPONENT_PREFIX, Dereferencer, jsonTypeOf, toComponentForm } from './schema.ts';
import { ContractError, diagnostic, type Diagnostic, type SourceFile } from './source.ts';
import { onForget, session } from './session.ts';
import { featuresOf, personalDataOf, STANDARD_LIMITS, STANDARD_MCP_PROTOCOL_VERSIONS, STANDARD_PROBLEMS } from './standard-library.ts';

export interface ModelOperation {
  def: OperationDef;
  pascal: string;
  description: string;
  decision: string | null;
  /** Declared errors (before the implied ones are added). */
  declaredErrors: string[];
  /** Component names of the operation's own schemas. */
  inputName: string;
  /**
   * `<Pascal>Output`: a read's output, a command's result. Never `<Pascal>Result`, which client
   * generators (orval) create themselves for each operation.
   */
  outputName: string;
  /** Paged reads: the item schema (component form). */
  pageItem: JsonSchema | null;
  /** Input properties in author order with where each travels. */
  inputs: { name: string; location: ParamLocation; required: boolean; schema: JsonSchema }[];
}

export interface FamilyModel {
  name: string;
  description: string;
  operations: ModelOperation[];
}

export interface Model {
  service: ServiceDef;
  info: { title: string; version: string; description: string; releaseDate: string | null; decision: string | null };
  operations: ModelOperation[];
  families: FamilyModel[];
  /** Every component schema: the contract's, Problem, the outcome envelopes and the per-operation ones. */
  schemas: Record<string, JsonSchema>;
  contractSchemaNames: string[];
  scopes: { name: string; description: string; decision: string | null }[];
  problems: (ProblemDef & { decision: string | null })[];
  eventTypes: { name: string; description: string; emittedBy: string[] }[];
  principals: { name: string; description: string; decision: string | null }[];
  limits: Record<string, number>;
  limitsDecision: string | null;
  /** svc.yaml mcpDynamic's decision note (its tools are service.mcpDynamicTools). */
  mcpDynamicDecision: string | null;
  changelog: { version: string; date: string; added: string[]; deprecated: string[]; removed: string[]; corrected: string[] }[];
  /** svc.yaml guideExamples: the operations the generated guides show (guide-examples.ts). */
  guideExamples: GuideExamples;
}

const IMPLIED_ALL = ['unauthorized', 'invalid_token', 'not_configured', 'rate_limited', 'internal_error', 'payload_too_large'];

function text(x: unknown): string {
  return typeof x === 'string' ? x.trim() : '';
}

function decisionOf(x: unknown): string | null {
  const d = asObj(x).decision;
  return typeof d === 'string' ? d.trim() : null;
}

function ref(name: string): JsonSchema {
  return { $ref: COMPONENT_PREFIX + name };
}

/** Implied problem codes (contract/README.md, last section) plus the declared ones, sorted. */
function problemsOf(def: Omit<OperationDef, 'problems' | 'mcp' | 'mcpReason'>, declared: string[], hasInputs: boolean): string[] {
  const codes = new Set([...declared, ...IMPLIED_ALL]);
  if (def.scope) codes.add('insufficient_scope');
  if (hasInputs) codes.add('validation_failed');
  if (def.kind === 'command') {
    codes.add('not_found');
    if (BODY_METHODS.has(def.method)) {
      codes.add('unsupported_media_type');
      codes.add('malformed_json');
    }
    if (def.idempotency === 'required') codes.add('idempotency_key_required');
    if (def.idempotency !== 'none') {
      codes.add('idempotency_key_reused');
      codes.add('idempotency_key_in_progress');
    }
    if (def.ifMatch === 'required') {
      codes.add('precondition_failed');
      codes.add('precondition_required');
    }
  }
  return [...codes].sort();
}

type ModelProblem = Model['problems'][number];

/** svc.yaml problems over the standard library's: a declared code is the contract's, every other built in. Sorted by code. */
function problemCatalogue(declared: unknown): ModelProblem[] {
  const byCode = new Map<string, ModelProblem>();
  for (const [code, p] of Object.entries(STANDARD_PROBLEMS))
    byCode.set(code, { code, status: p.status, title: p.title, retry: p.retry, retryAfter: p.retryAfter, decision: null });
  for (const [code, raw] of Object.entries(asObj(declared))) {
    const p = asObj(raw);
    byCode.set(code, {
      code,
      status: p.status as number,
      title: text(p.title),
      retry: p.retry as RetryClass,
      retryAfter: typeof p.retryAfter === 'number' ? p.retryAfter : null,
      decision: decisionOf(p),
    });
  }
  return [...byCode.values()].sort((a, b) => (a.code < b.code ? -1 : 1));
}

/** svc.yaml limits over the standard library's values, sorted by name. */
function limitValues(declared: unknown): Record<string, number> {
  const values: Record<string, number> = Object.fromEntries(Object.entries(STANDARD_LIMITS).map(([name, l]) => [name, l.value]));
  for (const [name, v] of Object.entries(asObj(declared))) if (typeof v === 'number') values[name] = v;
  const limits: Record<string, number> = {};
  for (const name of Object.keys(values).sort()) limits[name] = values[name];
  return limits;
}

/** pageSize as the runtime reads it (runtime/data/paging.ts): limits.pageSizeDefault, at most limits.pageSizeMax. */
function pageSizeSchema(limits: Record<string, number>): JsonSchema {
  return { type: 'integer', minimum: 1, maximum: limits.pageSizeMax, default: limits.pageSizeDefault };
}

/** Builds the input object in component form: top-level $ref/allOf merged, defaults applied, paging added. */
function inputSchema(raw: unknown, env: Pick<Environment, 'contractSchemas' | 'pageSize'>, paged: boolean): JsonSchema {
  const { contractSchemas } = env;
  const node = asObj(raw);
  const merged = inputProperties(raw, contractSchemas);
  const top: Obj = {};
  if (typeof node.$ref === 'string') {
    const target = asObj(contractSchemas.get(node.$ref));
    for (const [k, v] of Object.entries(target)) if (k !== 'properties' && k !== 'required') top[k] = v;
  }
  for (const [k, v] of Object.entries(node)) if (!['$ref', 'allOf', 'properties', 'required'].includes(k)) top[k] = v;
  const properties: Obj = { ...merged.properties };
  if (paged) {
    properties.cursor = contractSchemas.has('Cursor') ? { $ref: 'Cursor' } : { type: 'string', description: 'Opaque cursor from nextCursor.' };
    properties.pageSize = contractSchemas.has('PageSize') ? { $ref: 'PageSize' } : env.pageSize;
  }
  const schema: Obj = { type: 'object', ...top, properties };
  if (merged.required.length) schema.required = merged.required;
  if (!('additionalProperties' in schema)) schema.additionalProperties = false;
  return toComponentForm(schema);
}

/**
 * What a model is built in besides the family files: svc.yaml and the schema files, parsed. A
 * watcher's loader hands back the same parsed objects while their text is unchanged (load.ts), so an
 * environment is the same when every one of those objects is.
 */
interface Environment {
  sources: readonly unknown[];
  contractSchemas: Map<string, unknown>;
  schemaHome: Map<string, { file: SourceFile }>;
  contractSchemaNames: string[];
  /** The contract's schemas in component form, and Problem and the outcome envelopes. */
  baseSchemas: Record<string, JsonSchema>;
  plannedOutcome: JsonSchema;
  /** A paged read's pageSize when the contract has no PageSize schema: the page size limits'. */
  pageSize: JsonSchema;
  proposedOutcome: JsonSchema;
  /** svc.yaml mcpToolPrefix, or DEFAULT_MCP_TOOL_PREFIX: operation tools are `<prefix>.<id>`. */
  toolPrefix: string;
  /** Each family file's part of the model, built in this environment (a watcher's memo). */
  families: WeakMap<SourceFile, FamilyPart>;
}

/** One family file's part of the model: its operations and the component schemas they generate. */
interface FamilyPart {
  family: string;
  description: string;
  operations: ModelOperation[];
  generated: [string, JsonSchema][];
  clashes: Diagnostic[];
}

/**
 * A watcher's last FamilyModel of each family name: handed back when the family's description and
 * operations (by identity) are those, so that emitters may keep what they derived from it.
 */
let lastFamilies = new Map<string, FamilyModel>();

function sameFamily(family: FamilyModel): FamilyModel {
  if (!session.longLived) return family;
  const last = lastFamilies.get(family.name);
  if (last && last.description === family.description && last.operations.length === family.operations.length && last.operations.every((op, i) => op === family.operations[i]))
    return last;
  lastFamilies.set(family.name, family);
  return family;
}

/** The environment of the last build in this process; a watcher's next build reuses it when nothing in it changed. */
let lastEnvironment: Environment | null = null;
onForget(() => {
  lastEnvironment = null;
  lastFamilies = new Map();
});

function environmentOf(contract: LoadedContract): Environment {
  const sources = [contract.svc, ...contract.schemaFiles];
  const last = lastEnvironment;
  if (session.longLived && last && last.sources.length === sources.length && last.sources.every((s, i) => s === sources[i])) return last;
  const contractSchemas = new Map<string, unknown>();
  const schemaHome = new Map<string, { file: SourceFile }>();
  for (const file of contract.schemaFiles)
    for (const [name, schema] of Object.entries(asObj(file.data))) {
      contractSchemas.set(name, schema);
      schemaHome.set(name, { file });
    }
  const contractSchemaNames = [...contractSchemas.keys()].sort();
  const baseSchemas: Record<string, JsonSchema> = {};
  for (const name of contractSchemaNames) baseSchemas[name] = toComponentForm(contractSchemas.get(name));
  if (!contractSchemas.has('Problem')) baseSchemas.Problem = PROBLEM_SCHEMA;
  const environment: Environment = {
    sources,
    contractSchemas,
    schemaHome,
    contractSchemaNames,
    baseSchemas,
    plannedOutcome: plannedOutcome(contractSchemas.has('Plan')),
    pageSize: pageSizeSchema(limitValues(asObj(contract.svc?.data).limits)),
    proposedOutcome: proposedOutcome(contractSchemas.has('Approval')),
    toolPrefix: typeof asObj(contract.svc?.data).mcpToolPrefix === 'string' ? String(asObj(contract.svc?.data).mcpToolPrefix) : DEFAULT_MCP_TOOL_PREFIX,
    families: new WeakMap(),
  };
  if (session.longLived) lastEnvironment = environment;
  return environment;
}

export function buildModel(contract: LoadedContract): Model {
  const diagnostics = checkContract(contract);
  if (diagnostics.length) throw new ContractError(diagnostics);
  const svc = asObj(contract.svc?.data);
  const info = asObj(svc.info);

  const env = environmentOf(contract);
  const { contractSchemas, schemaHome, contractSchemaNames } = env;
  const schemas: Record<string, JsonSchema> = { ...env.baseSchemas };

  const clashes: Diagnostic[] = [];
  const addGenerated = (name: string, schema: JsonSchema) => {
    const home = schemaHome.get(name);
    if (home)
      clashes.push(diagnostic(home.file, [name], 'generated-name-clash', `Schema ${name} has the name the generator gives to a generated schema. Rename the contract schema.`, 'key'));
    schemas[name] = schema;
  };
  addGenerated('PlannedOutcome', env.plannedOutcome);
  addGenerated('ProposedOutcome', env.proposedOutcome);

  const scopes = asArray(svc.scopes).map((s) => ({ name: String(asObj(s).name), description: text(asObj(s).description), decision: decisionOf(s) }));
  const problems = problemCatalogue(svc.problems);
  const limits = limitValues(svc.limits);

  const roleScopes: Record<string, string[]> = {};
  for (const role of Object.values(asObj(svc.roles))) {
    const r = asObj(role);
    for (const label of strings(r.labels)) roleScopes[label] = r.scopes === 'all' ? scopes.map((s) => s.name) : strings(r.scopes);
  }

  const version = text(info.version);
  const service: ServiceDef = {
    title: text(info.title),
    ...(typeof info.description === 'string' ? { description: info.description.trim() } : {}),
    contractVersion: version,
    apiVersion: version.split('.').slice(0, 2).join('.'),
    mcpProtocolVersions: svc.mcpProtocolVersions === undefined ? [...STANDARD_MCP_PROTOCOL_VERSIONS] : strings(svc.mcpProtocolVersions),
    mcpDynamicTools: [],
    // Present only when declared: an undeclared key leaves the facts (and generated/) as before.
    ...(typeof svc.apiVersionHeader === 'string' ? { apiVersionHeader: svc.apiVersionHeader } : {}),
    ...(typeof svc.mcpToolPrefix === 'string' ? { mcpToolPrefix: svc.mcpToolPrefix } : {}),
    ...personalDataOf(svc.personalData),
    versions: asArray(svc.versions).map((v) => {
      const o = asObj(v);
      return { version: String(o.version), status: o.status === 'deprecated' ? 'deprecated' : 'current', sunset: typeof o.sunset === 'string' ? o.sunset : null };
    }),
    scopes: scopes.map((s) => s.name),
    principals: asArray(svc.principals).map((p) => String(asObj(p).name) as PrincipalKind),
    roleScopes,
    eventTypes: asArray(svc.eventTypes).map((e) => String(asObj(e).name)),
    problems: Object.fromEntries(problems.map(({ decision: _d, ...p }) => [p.code, p])),
    limits,
    features: featuresOf(svc.features),
  };

  const deref = new Dereferencer(schemas);
  const operations: ModelOperation[] = [];
  const familyDescriptions = new Map<string, string>();
  for (const file of contract.familyFiles) {
    const part = env.families.get(file) ?? familyPart(file, env, schemas, deref, 'Plan' in schemas);
    if (session.longLived) env.families.set(file, part);
    familyDescriptions.set(part.family, part.description);
    operations.push(...part.operations);
    for (const [name, schema] of part.generated) schemas[name] = schema;
    clashes.push(...part.clashes);
  }
  if (clashes.length) throw new ContractError(clashes);
  // The dynamic mode's meta-tools: their annotations derive from the operation tools they reach.
  const dynamic = contract.svc ? buildDynamicTools(contract.svc, deref, operations.map((o) => o.def), (name) => contractSchemas.has(name)) : { tools: [], decision: null, diagnostics: [] };
  if (dynamic.diagnostics.length) throw new ContractError(dynamic.diagnostics);
  service.mcpDynamicTools = dynamic.tools;
  operations.sort((a, b) => (a.def.id < b.def.id ? -1 : a.def.id > b.def.id ? 1 : 0));
  const guides = guideExamplesOf(contract.svc, operations);
  if (guides.diagnostics.length) throw new ContractError(guides.diagnostics);

  const byFamily = new Map<string, ModelOperation[]>();
  for (const op of operations) byFamily.set(op.def.family, [...(byFamily.get(op.def.family) ?? []), op]);
  const families = [...familyDescriptions.keys()].sort().map((name) => sameFamily({
    name,
    description: familyDescriptions.get(name) ?? '',
    operations: byFamily.get(name) ?? [],
  }));

  const emittedBy = new Map<string, string[]>();
  for (const op of operations) for (const e of op.def.emits) emittedBy.set(e, [...(emittedBy.get(e) ?? []), op.def.id]);

  const sortedSchemas: Record<string, JsonSchema> = {};
  for (const key of Object.keys(schemas).sort()) sortedSchemas[key] = schemas[key];

  return {
    service,
    info: {
      title: service.title,
      version,
      description: text(info.description),
      releaseDate: typeof info.releaseDate === 'string' ? info.releaseDate : null,
      decision: decisionOf(info),
    },
    operations,
    families,
    schemas: sortedSchemas,
    contractSchemaNames,
    scopes,
    problems,
    eventTypes: asArray(svc.eventTypes).map((e) => {
      const name = String(asObj(e).name);
      return { name, description: text(asObj(e).description), emittedBy: emittedBy.get(name) ?? [] };
    }),
    principals: asArray(svc.principals).map((p) => ({ name: String(asObj(p).name), description: text(asObj(p).description), decision: decisionOf(p) })),
    limits,
    limitsDecision: decisionOf(svc.limits),
    mcpDynamicDecision: dynamic.decision,
    guideExamples: guides.examples,
    changelog: asArray(svc.changelog).map((c) => {
      const o = asObj(c);
      return { version: String(o.version), date: String(o.date), added: strings(o.added), deprecated: strings(o.deprecated), removed: strings(o.removed), corrected: strings(o.corrected) };
    }),
  };
}

/** A Tier 2/3 command's `subject: { resource, from }`; null for `subject: { none: reason }` and otherwise. */
function subjectOf(op: Record<string, unknown>): OperationDef['subject'] {
  const s = op.subject;
  if (!isObj(s) || typeof s.resource !== 'string' || typeof s.from !== 'string') return null;
  return { resource: s.resource, from: s.from };
}

/**
 * The operations of one family file and the component schemas they generate. Reads nothing of the
 * other family files: a family's $refs name contract schemas only (check.ts), so a watcher keeps the
 * part while its file and the environment are unchanged.
 */
function familyPart(file: SourceFile, env: Environment, schemas: Record<string, JsonSchema>, deref: Dereferencer, hasPlan: boolean): FamilyPart {
  const { contractSchemas, schemaHome } = env;
  const data = asObj(file.data);
  const family = String(data.family);
  const operations: ModelOperation[] = [];
  const generated: [string, JsonSchema][] = [];
  const clashes: Diagnostic[] = [];
  const addGenerated = (name: string, schema: JsonSchema) => {
    const home = schemaHome.get(name);
    if (home)
      clashes.push(diagnostic(home.file, [name], 'generated-name-clash', `Schema ${name} has the name the generator gives to a generated schema. Rename the contract schema.`, 'key'));
    generated.push([name, schema]);
    schemas[name] = schema; // deref (over schemas) resolves the operation's own schemas below
  };
  for (const rawOp of asArray(data.operations)) {
    const op = asObj(rawOp);
    const id = String(op.id);
    const kind = op.kind as 'read' | 'command';
    const http = asObj(op.http);
    const method = String(http.method) as HttpMethod;
    const path = String(http.path);
    const paged = kind === 'read' && 'page' in op;
    const name = pascal(id);
    const input = inputSchema(op.input, env, paged);
    const inputName = `${name}Input`;
    addGenerated(inputName, input);

    let outputName: string;
    let pageItem: JsonSchema | null = null;
    if (kind === 'command') {
      outputName = `${name}Output`;
      addGenerated(outputName, toComponentForm(op.result));
    } else {
      outputName = `${name}Output`;
      if (paged) {
        pageItem = toComponentForm(op.page);
        addGenerated(outputName, pageSchema(pageItem));
      } else addGenerated(outputName, toComponentForm(op.output));
    }

    const pathNames = new Set(pathParams(path));
    const queryFromBody = new Set(strings(http.query));
    const required = new Set(strings(input.required));
    const params: Record<string, ParamLocation> = {};
    const paramTypes: Record<string, string> = {};
    const inputs: ModelOperation['inputs'] = [];
    for (const [prop, schema] of Object.entries(asObj(input.properties))) {
      const location: ParamLocation = pathNames.has(prop)
        ? 'path'
        : !BODY_METHODS.has(method) || queryFromBody.has(prop)
          ? 'query'
          : 'body';
      params[prop] = location;
      if (location !== 'body') paramTypes[prop] = jsonTypeOf(deref.top(schema));
      inputs.push({ name: prop, location, required: required.has(prop), schema: schema as JsonSchema });
    }

    const mcp = asObj(op.mcp);
    const isTool = mcp.tool === true;
    const declaredErrors = strings(op.errors);
    const base = {
      id,
      family,
      kind,
      tier: kind === 'command' ? (op.tier as 1 | 2 | 3) : null,
      subject: subjectOf(op),
      scope: typeof op.scope === 'string' ? op.scope : null,
      audience: strings(op.audience) as PrincipalKind[],
      summary: text(op.summary),
      method,
      path,
      params,
      paramTypes,
      successStatus: kind === 'command' && typeof http.status === 'number' ? http.status : 200,
      paged,
      stream: op.stream === 'sse' ? ('sse' as const) : null,
      idempotency: kind === 'command' ? ((op.idempotency as OperationDef['idempotency']) ?? 'honoured') : ('none' as const),
      ifMatch: kind === 'command' ? ((op.ifMatch as OperationDef['ifMatch']) ?? 'none') : ('none' as const),
      emits: strings(op.emits),
      deprecated: isObj(op.deprecated) ? (op.deprecated as unknown as OperationDef['deprecated']) : null,
    };
    const description = text(op.description) || text(op.summary);
    const def: OperationDef = {
      ...base,
      problems: problemsOf(base, declaredErrors, inputs.length > 0),
      mcp: null,
      mcpReason: isTool ? null : text(mcp.reason),
    };
    if (isTool)
      def.mcp = buildMcpTool(env.toolPrefix, def, description, deref.deref(ref(inputName)), deref.top(ref(outputName)), hasPlan ? deref.top(ref('Plan')) : null, {
        destructive: kind === 'command' ? mcp.destructive === true : false,
        idempotent: kind === 'command' ? mcp.idempotent === true : true,
        openWorld: mcp.openWorld === true,
      });
    operations.push({ def, pascal: name, description, decision: decisionOf(op), declaredErrors, inputName, outputName, pageItem, inputs });
  }
  return { family, description: text(data.description), operations, generated, clashes };
}
