// Step 2: every rule of the contract. First the shape of each file (shapes.ts, against the contract
// format's JSON Schema), then the rules that relate values to each other (this file and
// deprecation.ts). All errors of a run are collected, never just the first; a rule stays quiet about a
// value whose shape is already reported, so that one mistake is one error.
import path from 'node:path';
import { checkDeprecations } from './deprecation.ts';
import type { LoadedContract } from './load.ts';
import { asArray, asObj, HTTP_METHODS, inputProperties, isObj, OPERATION_ID, pascal, pathParams, routeShape, strings, type Obj } from './raw.ts';
import { checkShapes, touchesBroken, underBroken } from './shapes.ts';
import { diagnostic, positionOf, type Diagnostic, type JsonPath, type SourceFile } from './source.ts';
import { didYouMeanText } from './suggest.ts';
import { onForget, session } from './session.ts';
import { featuresOf, PRINCIPAL_KINDS, STANDARD_PROBLEMS } from './standard-library.ts';
import type { ServiceFeatures } from '../runtime/contract-types.ts';

const TOTAL_KEYS = ['operations', 'reads', 'commands', 'families', 'tools', 'scopes', 'eventTypes'] as const;

interface Known {
  scopes: Set<string>;
  problems: Set<string>;
  eventTypes: Set<string>;
  principals: Set<string>;
  /** svc.yaml features (featuresOf: off unless turned on). */
  features: ServiceFeatures;
  schemas: Map<string, unknown>;
}

class Checker {
  readonly out: Diagnostic[] = [];
  constructor(
    readonly known: Known,
    readonly broken: Map<string, JsonPath[]>,
  ) {}

  report(source: SourceFile, at: JsonPath, rule: string, message: string, where: 'key' | 'value' = 'value'): void {
    if (underBroken(this.broken, source.file, at)) return;
    this.out.push(diagnostic(source, at, rule, message, where));
  }

  /** ajv compiles patterns as ECMA-262 with the u flag, which refuses escapes a plain RegExp accepts. */
  pattern(source: SourceFile, pattern: string, at: JsonPath, where: 'key' | 'value'): void {
    try {
      new RegExp(pattern, 'u');
    } catch (err) {
      const why = (err as Error).message.replace(/^Invalid regular expression: /, '');
      this.report(
        source,
        at,
        'invalid-schema',
        `The pattern ${JSON.stringify(pattern)} is not a valid regular expression in unicode mode (${why}). Fix it: JSON Schema patterns are ECMA-262 regular expressions with the u flag, where only syntax characters may be escaped.`,
        where,
      );
    }
  }

  /** $ref names, enum openness and patterns anywhere inside a schema. */
  schema(source: SourceFile, node: unknown, at: JsonPath): void {
    if (Array.isArray(node)) {
      node.forEach((item, i) => this.schema(source, item, [...at, i]));
      return;
    }
    if (!isObj(node)) return;
    if (typeof node.$ref === 'string' && !this.known.schemas.has(node.$ref)) {
      const ref = node.$ref;
      const names = [...this.known.schemas.keys()];
      const hint = ref.includes('/') ? ` Write the bare name (e.g. $ref: ${ref.split('/').pop()}).` : `${didYouMeanText(ref, names)} Use the name of a schema defined in contract/schemas/*.yaml, or define it there.`;
      this.report(source, [...at, '$ref'], 'unknown-ref', `$ref ${JSON.stringify(ref)} names no schema in schemas/.${hint}`);
    }
    if (typeof node.pattern === 'string') this.pattern(source, node.pattern, [...at, 'pattern'], 'value');
    for (const pattern of Object.keys(asObj(node.patternProperties))) this.pattern(source, pattern, [...at, 'patternProperties', pattern], 'key');
    if (Array.isArray(node.enum)) {
      if (!('x-svc-enum' in node)) {
        this.report(
          source,
          [...at, 'enum'],
          'enum-without-openness',
          'This enum does not say whether it is open or closed. Add x-svc-enum: open (may gain values in a minor release) or x-svc-enum: closed.',
          'key',
        );
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'example') continue;
      if (typeof value === 'object' && value !== null) this.schema(source, value, [...at, key]);
    }
  }
}

function knownFromSvc(contract: LoadedContract, checker: Diagnostic[]): Omit<Known, 'schemas'> {
  const svc = asObj(contract.svc?.data);
  const scopes = new Set<string>();
  asArray(svc.scopes).forEach((s, i) => {
    const name = asObj(s).name;
    if (typeof name !== 'string') return;
    if (scopes.has(name) && contract.svc)
      checker.push(diagnostic(contract.svc, ['scopes', i, 'name'], 'duplicate-scope', `Scope ${name} is listed twice. Remove the second entry.`));
    scopes.add(name);
  });
  return {
    scopes,
    problems: new Set([...Object.keys(STANDARD_PROBLEMS), ...Object.keys(asObj(svc.problems))]),
    eventTypes: new Set(asArray(svc.eventTypes).map((e) => String(asObj(e).name))),
    principals: new Set(asArray(svc.principals).map((p) => String(asObj(p).name))),
    features: featuresOf(svc.features),
  };
}

/**
 * A principal the runtime does not authenticate (runtime/auth knows PRINCIPAL_KINDS only) would
 * compile, and every operation whose audience names only it would answer 404 to every caller.
 */
function checkPrincipals(c: Checker, svc: SourceFile): void {
  const kinds: readonly string[] = PRINCIPAL_KINDS;
  asArray(asObj(svc.data).principals).forEach((p, i) => {
    const name = asObj(p).name;
    if (typeof name === 'string' && !kinds.includes(name))
      c.report(svc, ['principals', i, 'name'], 'unknown-principal', `Principal ${JSON.stringify(name)} is not a kind the runtime authenticates, so no caller could reach an operation for it.${didYouMeanText(name, kinds)} Use ${kinds.join(', ')} (an operator is a staff user or an unbound API key, a client_admin an administrator of one client, a service_account an API key bound to clients).`);
    // A client admin and a service account exist only where records belong to clients.
    else if ((name === 'client_admin' || name === 'service_account') && !c.known.features.clientTenancy)
      c.report(svc, ['principals', i, 'name'], 'feature-off', `Principal ${name} belongs to client tenancy, which this contract does not turn on. Add features: { clientTenancy: true } to svc.yaml, or remove the principal (operator is the kind without clients).`);
  });
}

/**
 * svc.yaml personalData.scope unlocks the personal data the runtime redacts (Policy.redactPersonalData):
 * a scope no credential can be granted would redact it for every caller, for good.
 */
function checkPersonalData(c: Checker, svc: SourceFile): void {
  const scope = asObj(asObj(svc.data).personalData).scope;
  if (typeof scope === 'string' && !c.known.scopes.has(scope))
    c.report(svc, ['personalData', 'scope'], 'unknown-scope', `personalData.scope ${JSON.stringify(scope)} is not declared in svc.yaml.${didYouMeanText(scope, [...c.known.scopes])} Name one of the scopes in svc.yaml, or add it there.`);
}

interface OpSeen {
  source: SourceFile;
  at: JsonPath;
}

function where(seen: OpSeen): string {
  const p = positionOf(seen.source, seen.at);
  return `${seen.source.file}:${p.line}:${p.col}`;
}

/** An operation id: the first to claim it keeps it; a second is reported. */
function claimId(c: Checker, ids: Map<string, OpSeen>, id: string, seen: OpSeen): void {
  const first = ids.get(id);
  if (first) c.report(seen.source, seen.at, 'duplicate-operation-id', `Operation id ${id} is already defined at ${where(first)}. Give each operation its own id.`);
  else ids.set(id, seen);
}

/** A route (method and path shape): the first to claim it keeps it; a second is reported. */
function claimRoute(c: Checker, routes: Map<string, OpSeen>, method: string, opPath: string, seen: OpSeen): void {
  const shape = routeShape(method, opPath);
  const first = routes.get(shape);
  if (first) c.report(seen.source, seen.at, 'duplicate-route', `${method} ${opPath} is already routed at ${where(first)}. Give each operation its own method and path.`);
  else routes.set(shape, seen);
}

/**
 * A watcher's memo of the rules about each family file (session.ts). Every rule about one operation
 * reads the operation, its file's broken shapes, and what svc.yaml and the schema files declare; the
 * only rules that read other family files are the duplicate id and route rules. So a family file
 * whose rules reported nothing, checked again in the same environment (the same parsed svc.yaml and
 * schema files), reports nothing again but for duplicates: what it claims (its ids and routes, in
 * order) and counts is kept and replayed. A file that reported anything is checked in full each time.
 */
interface FamilyFacts {
  family: string | null;
  ops: { id: [string, OpSeen] | null; route: [string, string, OpSeen] | null }[];
  reads: number;
  commands: number;
  tools: number;
}

interface RulesEnvironment {
  sources: readonly unknown[];
  /** The schema files' rules reported nothing. */
  schemasClean: boolean;
  families: WeakMap<SourceFile, FamilyFacts>;
}

let lastRulesEnvironment: RulesEnvironment | null = null;
onForget(() => {
  lastRulesEnvironment = null;
});

function rulesEnvironment(contract: LoadedContract): RulesEnvironment | null {
  if (!session.longLived) return null;
  const sources = [contract.svc, ...contract.schemaFiles];
  const last = lastRulesEnvironment;
  if (last && last.sources.length === sources.length && last.sources.every((s, i) => s === sources[i])) return last;
  return (lastRulesEnvironment = { sources, schemasClean: false, families: new WeakMap() });
}

/** What a family file claims and counts, read from its operations (only for a file whose rules reported nothing). */
function factsOf(file: SourceFile, family: string | null): FamilyFacts {
  const facts: FamilyFacts = { family, ops: [], reads: 0, commands: 0, tools: 0 };
  asArray(asObj(file.data).operations).forEach((raw, i) => {
    const op = asObj(raw);
    if (op.kind === 'read') facts.reads++;
    if (op.kind === 'command') facts.commands++;
    if (asObj(op.mcp).tool === true) facts.tools++;
    const at: JsonPath = ['operations', i];
    const http = asObj(op.http);
    const method = typeof http.method === 'string' && (HTTP_METHODS as readonly string[]).includes(http.method) ? http.method : '';
    const opPath = typeof http.path === 'string' && http.path.startsWith('/') ? http.path : '';
    facts.ops.push({
      id: typeof op.id === 'string' && OPERATION_ID.test(op.id) ? [op.id, { source: file, at: [...at, 'id'] }] : null,
      route: method && opPath ? [method, opPath, { source: file, at: [...at, 'http', 'path'] }] : null,
    });
  });
  return facts;
}

function checkOperation(
  source: SourceFile,
  family: string | null,
  op: Obj,
  at: JsonPath,
  c: Checker,
  ids: Map<string, OpSeen>,
  routes: Map<string, OpSeen>,
): void {
  const id = op.id;
  const label = typeof id === 'string' ? id : `operations[${String(at[1])}]`;
  // The id's shape, like every value's type and every key, is the contract format's (shapes.ts).
  if (typeof id === 'string' && OPERATION_ID.test(id)) {
    claimId(c, ids, id, { source, at: [...at, 'id'] });
    if (family !== null && id.split('.')[0] !== family)
      c.report(source, [...at, 'id'], 'family-mismatch', `Operation ${id} is in family ${family} but its id starts with ${id.split('.')[0]}. Start the id with "${family}." or move it to families/${id.split('.')[0]}.yaml.`);
  }
  const kind = op.kind;
  if (kind === 'command' && !('tier' in op))
    c.report(source, at, 'command-without-tier', `Command ${label} has no tier. Add tier: 1 (runs at once), 2 or 3 (becomes a proposal).`);
  if (kind === 'read' && 'tier' in op && op.tier !== null)
    c.report(source, [...at, 'tier'], 'read-with-tier', `Read ${label} has a tier. Remove tier: only commands are tiered.`, 'key');
  if (kind === 'command' && 'tier' in op && op.tier === null)
    c.report(source, [...at, 'tier'], 'invalid-tier', `Command ${label} has tier null. Use tier 1 (runs at once), 2 or 3 (becomes a proposal).`);
  if (kind === 'command' && (op.tier === 2 || op.tier === 3) && !c.known.features.approvals)
    c.report(source, [...at, 'tier'], 'feature-off', `${label} is Tier ${op.tier}, so it would become a proposal, but this contract does not turn approvals on. Add features: { approvals: true } to svc.yaml, or make it tier: 1.`);
  checkSubject(c, source, at, label, op);

  if (typeof op.scope === 'string' && !c.known.scopes.has(op.scope))
    c.report(source, [...at, 'scope'], 'unknown-scope', `Scope ${JSON.stringify(op.scope)} is not declared in svc.yaml.${didYouMeanText(op.scope, [...c.known.scopes])} Use one of the scopes in svc.yaml, or add it there (and adjust totals.scopes).`);

  asArray(op.audience).forEach((a, i) => {
    if (typeof a === 'string' && !c.known.principals.has(a))
      c.report(source, [...at, 'audience', i], 'unknown-audience', `Audience ${JSON.stringify(a)} is not a principal in svc.yaml.${didYouMeanText(a, [...c.known.principals])} Use ${[...c.known.principals].join(', ')}.`);
  });

  const http = asObj(op.http);
  const method = typeof http.method === 'string' && (HTTP_METHODS as readonly string[]).includes(http.method) ? http.method : '';
  const opPath = typeof http.path === 'string' && http.path.startsWith('/') ? http.path : '';
  if (method && opPath) claimRoute(c, routes, method, opPath, { source, at: [...at, 'http', 'path'] });

  if (isObj(op.input)) {
    c.schema(source, op.input, [...at, 'input']);
    const top = typeof op.input.$ref === 'string' ? asObj(c.known.schemas.get(op.input.$ref)) : op.input;
    if ('anyOf' in top || 'oneOf' in top || 'anyOf' in op.input || 'oneOf' in op.input)
      c.report(source, [...at, 'input'], 'input-union', `${label}'s input has a top-level anyOf/oneOf, which MCP clients reject and REST cannot spread over path, query and body. Make the input one object; express alternatives as optional properties and document the rule.`);
  }
  const props = inputProperties(op.input, c.known.schemas).properties;
  for (const name of pathParams(opPath)) {
    if (!(name in props))
      c.report(source, [...at, 'http', 'path'], 'missing-path-parameter', `Path parameter {${name}} is not a property of ${label}'s input. Add ${name} to input.properties (and to input.required).`);
  }
  for (const [i, q] of asArray(http.query).entries()) {
    if (typeof q === 'string' && !(q in props))
      c.report(source, [...at, 'http', 'query', i], 'unknown-query-input', `http.query names ${JSON.stringify(q)}, which is not an input property. List only input properties.`);
  }

  for (const key of ['output', 'result', 'page'] as const) if (key in op) c.schema(source, op[key], [...at, key]);
  if (kind === 'read' && !('output' in op) && !('page' in op))
    c.report(source, at, 'missing-output', `Read ${label} has neither output nor page. Add output: {$ref: ...} (or page: {$ref: ...} for a paged list).`);
  if (kind === 'read' && 'output' in op && 'page' in op)
    c.report(source, [...at, 'page'], 'missing-output', `Read ${label} has both output and page. Keep one: page for paged lists, output otherwise.`, 'key');
  if (kind === 'command' && !('result' in op))
    c.report(source, at, 'missing-output', `Command ${label} has no result. Add result: {$ref: ...} (what result holds when it ran).`);

  if (kind === 'command' && method === 'POST' && http.status === 201 && op.idempotency !== 'required')
    c.report(source, 'idempotency' in op ? [...at, 'idempotency'] : at, 'creating-post-without-idempotency', `Creating POST ${label} (status 201) does not require an Idempotency-Key. Add idempotency: required.`);
  if (kind === 'read' && (('idempotency' in op && op.idempotency !== 'none') || ('ifMatch' in op && op.ifMatch !== 'none')))
    c.report(source, 'idempotency' in op ? [...at, 'idempotency'] : [...at, 'ifMatch'], 'invalid-value', `Read ${label} declares idempotency or ifMatch. Remove them: they apply to commands only.`, 'key');

  asArray(op.errors).forEach((code, i) => {
    if (typeof code === 'string' && !c.known.problems.has(code))
      c.report(source, [...at, 'errors', i], 'unknown-problem-code', `Problem code ${JSON.stringify(code)} is neither built in nor in svc.yaml problems.${didYouMeanText(code, [...c.known.problems])} Use a built-in or declared code, or declare it in svc.yaml with status, title and retry.`);
  });
  asArray(op.emits).forEach((type, i) => {
    if (typeof type === 'string' && !c.known.eventTypes.has(type))
      c.report(source, [...at, 'emits', i], 'unknown-event-type', `Event type ${JSON.stringify(type)} is not in svc.yaml eventTypes.${didYouMeanText(type, [...c.known.eventTypes])} Use a declared event type, or declare it there (and adjust totals.eventTypes).`);
  });

  // mcp's shape (a map whose tool is a boolean) is the contract format's; these rules relate its keys.
  if (!isObj(op.mcp)) return;
  const mcp = op.mcp;
  if (mcp.tool === true) {
    if (kind === 'command') {
      const missing = ['destructive', 'idempotent'].filter((k) => !(k in mcp));
      if (missing.length)
        c.report(source, [...at, 'mcp'], 'tool-without-annotations', `Command tool ${label} does not say ${missing.join(' and ')}. Add ${missing.map((k) => `${k}: true|false`).join(' and ')} to mcp.`);
      checkAnnotations(source, op, method, at, label, c);
    }
  } else if (mcp.tool === false && (typeof mcp.reason !== 'string' || !mcp.reason.trim())) {
    c.report(source, [...at, 'mcp'], 'non-tool-without-reason', `${label} is not an MCP tool and gives no reason. Add mcp: {tool: false, reason: "<why agents do not get it>"} or mcp: {tool: true, ...}.`);
  }
}

/**
 * Annotations follow rules the contract states: a command that overwrites stored values (PATCH, PUT),
 * removes them (DELETE) or reaches a state with no way back (`final: true`) is destructive; a Tier 2/3
 * command files a new approval on every call, so it is not idempotent.
 */
function checkAnnotations(source: SourceFile, op: Obj, method: string, at: JsonPath, label: string, c: Checker): void {
  const mcp = asObj(op.mcp);
  const why = method === 'PATCH' || method === 'PUT' ? `it overwrites stored values (${method})` : method === 'DELETE' ? 'it removes stored values (DELETE)' : op.final === true ? 'it reaches a state with no way back (final: true)' : null;
  if (why && mcp.destructive === false)
    c.report(source, [...at, 'mcp', 'destructive'], 'annotation-contradiction', `${label} says destructive: false, but ${why}. Write destructive: true.`);
  if ((op.tier === 2 || op.tier === 3) && mcp.idempotent === true)
    c.report(source, [...at, 'mcp', 'idempotent'], 'annotation-contradiction', `${label} says idempotent: true, but as a Tier ${op.tier} command every call without a reused idempotency key files a new approval. Write idempotent: false.`);
}

export function checkContract(contract: LoadedContract): Diagnostic[] {
  const shapes = checkShapes(contract);
  return [...shapes.diagnostics, ...checkContractRules(contract, shapes.broken), ...checkDeprecations(contract, shapes.broken)];
}

function checkContractRules(contract: LoadedContract, broken: Map<string, JsonPath[]>): Diagnostic[] {
  const early: Diagnostic[] = [...contract.diagnostics];
  const base = knownFromSvc(contract, early);
  const schemas = new Map<string, unknown>();
  const schemaHome = new Map<string, OpSeen>();
  const dupSchemas: Diagnostic[] = [];
  for (const file of contract.schemaFiles) {
    for (const [name, schema] of Object.entries(asObj(file.data))) {
      const first = schemaHome.get(name);
      if (first) dupSchemas.push(diagnostic(file, [name], 'duplicate-schema', `Schema ${name} is already defined at ${where(first)}. Schema names are unique across schemas/; rename one.`, 'key'));
      else {
        schemaHome.set(name, { source: file, at: [name] });
        schemas.set(name, schema);
      }
    }
  }
  const c = new Checker({ ...base, schemas }, broken);
  c.out.push(...early, ...dupSchemas);
  if (contract.svc) checkPrincipals(c, contract.svc);
  if (contract.svc) checkPersonalData(c, contract.svc);
  const env = rulesEnvironment(contract);
  if (!env?.schemasClean) {
    const before = c.out.length;
    for (const file of contract.schemaFiles) for (const [name, schema] of Object.entries(asObj(file.data))) c.schema(file, schema, [name]);
    if (env && c.out.length === before && !broken.size) env.schemasClean = true;
  }

  const ids = new Map<string, OpSeen>();
  const routes = new Map<string, OpSeen>();
  const families = new Set<string>();
  let reads = 0;
  let commands = 0;
  let tools = 0;
  for (const file of contract.familyFiles) {
    if (file.data === null) continue;
    const data = asObj(file.data);
    const stem = path.basename(file.file).replace(/\.ya?ml$/, '');
    let family: string | null = null;
    if (typeof data.family === 'string') {
      family = data.family;
      families.add(family);
      if (family !== stem)
        c.report(file, ['family'], 'family-mismatch', `The file is named ${stem}.yaml but declares family ${family}. Rename the file to ${family}.yaml or fix family.`);
    }
    const known = env?.families.get(file);
    if (known) {
      for (const op of known.ops) {
        if (op.id) claimId(c, ids, op.id[0], op.id[1]);
        if (op.route) claimRoute(c, routes, op.route[0], op.route[1], op.route[2]);
      }
      reads += known.reads;
      commands += known.commands;
      tools += known.tools;
      continue;
    }
    const before = c.out.length;
    asArray(data.operations).forEach((op, i) => {
      const o = asObj(op);
      if (o.kind === 'read') reads++;
      if (o.kind === 'command') commands++;
      if (asObj(o.mcp).tool === true) tools++;
      checkOperation(file, family, o, ['operations', i], c, ids, routes);
    });
    if (env && c.out.length === before && !broken.has(file.file)) env.families.set(file, factsOf(file, family));
  }

  // Counting is meaningless while a file does not parse or a counted value is malformed (an invalid kind
  // counts as neither read nor command, a non-boolean mcp.tool as no tool): those errors say enough,
  // and the totals are compared once they are fixed.
  const countsBroken = (f: SourceFile) =>
    (broken.get(f.file) ?? []).some((b) => b.length < 3 || b[2] === 'kind' || b[2] === 'mcp' || b[0] === 'family');
  const countable =
    !contract.familyFiles.some((f) => f.data === null || countsBroken(f)) &&
    !['totals', 'scopes', 'eventTypes'].some((key) => contract.svc && touchesBroken(broken, contract.svc.file, [key]));
  if (contract.svc?.data && countable) {
    const svc = asObj(contract.svc.data);
    const declared = asObj(svc.totals);
    const actual: Record<(typeof TOTAL_KEYS)[number], number> = {
      operations: reads + commands,
      reads,
      commands,
      families: families.size,
      tools,
      scopes: asArray(svc.scopes).length,
      eventTypes: asArray(svc.eventTypes).length,
    };
    if ('totals' in svc)
      for (const key of TOTAL_KEYS) {
        if (declared[key] !== actual[key])
          c.report(contract.svc, ['totals', key], 'totals', `totals.${key} declares ${JSON.stringify(declared[key] ?? null)} but the contract has ${actual[key]}. Add or remove ${key} until the count matches, or correct the declared total.`, 'key');
      }
  }
  // Two ids can give one Pascal name (oauth_grants.list and oauth.grants_list: OauthGrantsList), and
  // with it one pair of generated schemas, one type and one handler name: the later would silently
  // take the earlier's place, so the second is reported where its id is written.
  const pascals = new Map<string, string>();
  for (const [id, seen] of ids) {
    const name = pascal(id);
    const first = pascals.get(name);
    if (first === undefined) pascals.set(name, id);
    else
      c.report(seen.source, seen.at, 'generated-name-clash', `Operation id ${id} gives the generated name ${name} (${name}Input, ${name}Output), which ${first} at ${where(ids.get(first)!)} already gives. Rename one of the two operations.`);
  }
  // The generator names each operation's schemas <Pascal>Input and <Pascal>Output, and adds the
  // outcome envelopes: a contract schema of one of those names would be overwritten (model.ts says so
  // too, but only once everything else passes; here it comes with the other errors of the run).
  // Only a name ending in Input or Output, or an envelope's, can clash: the operations' names are
  // made only when the contract has such a schema (8,200 operations: 16,400 names for nothing).
  const generated = new Map<string, string>([['PlannedOutcome', 'the dry-run envelope'], ['ProposedOutcome', 'the proposal envelope']]);
  if ([...schemaHome.keys()].some((name) => name.endsWith('Input') || name.endsWith('Output')))
    for (const id of ids.keys()) {
      generated.set(`${pascal(id)}Input`, `${id}'s input`);
      generated.set(`${pascal(id)}Output`, `${id}'s output`);
    }
  for (const [name, home] of schemaHome)
    if (generated.has(name))
      c.report(home.source, home.at, 'generated-name-clash', `Schema ${name} has the name the generator gives to ${generated.get(name)}. Rename the contract schema.`, 'key');
  return c.out;
}


// A Tier 2/3 command says how its proposal's subject (and so its client) is found:
// subject: { resource, from: <input member> } or subject: { none: <reason> }.
function checkSubject(c: Checker, source: SourceFile, at: JsonPath, label: string, op: Obj): void {
  const proposes = op.kind === 'command' && (op.tier === 2 || op.tier === 3);
  if (!('subject' in op)) {
    if (proposes)
      c.report(source, at, 'command-without-subject', `${label} is Tier ${op.tier} but has no subject. Add subject: { resource: <type>, from: <input member> }, or subject: { none: <why it has no client> }.`);
    return;
  }
  if (!proposes) {
    c.report(source, [...at, 'subject'], 'subject-without-proposal', `${label} has a subject but is not a Tier 2/3 command. Remove subject: only proposals have one.`, 'key');
    return;
  }
  const s = op.subject as Record<string, unknown> | null;
  const members = new Set(Object.keys(((op.input as Record<string, unknown> | undefined)?.properties as Record<string, unknown> | undefined) ?? {}));
  if (s && typeof s === 'object' && typeof s.none === 'string' && s.none.trim() && Object.keys(s).length === 1) return;
  if (!s || typeof s !== 'object' || typeof s.resource !== 'string' || typeof s.from !== 'string' || Object.keys(s).length !== 2)
    c.report(source, [...at, 'subject'], 'invalid-subject', `${label} has subject ${JSON.stringify(s)}. Write subject: { resource: <type>, from: <input member> } or subject: { none: <reason> }.`);
  else if (!members.has(s.from))
    c.report(source, [...at, 'subject', 'from'], 'invalid-subject', `${label} finds its subject from ${JSON.stringify(s.from)}, which is not an input member. Use one of: ${[...members].join(', ')}.`);
}
