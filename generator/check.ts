// Step 2: every rule of the contract format. All errors of a run are collected, never just the first.
import path from 'node:path';
import { checkDeprecations } from './deprecation.ts';
import { checkKeys } from './keys.ts';
import type { LoadedContract } from './load.ts';
import {
  asArray,
  asObj,

  HTTP_METHODS,
  inputProperties,
  isObj,
  OPERATION_ID,
  pathParams,
  routeShape,
  strings,
  type Obj,
} from './raw.ts';
import { diagnostic, positionOf, type Diagnostic, type JsonPath, type SourceFile } from './source.ts';

const TOTAL_KEYS = ['operations', 'reads', 'commands', 'families', 'tools', 'scopes', 'eventTypes'] as const;

interface Known {
  scopes: Set<string>;
  problems: Set<string>;
  eventTypes: Set<string>;
  principals: Set<string>;
  schemas: Map<string, unknown>;
}

class Checker {
  readonly out: Diagnostic[] = [];
  constructor(readonly known: Known) {}

  report(source: SourceFile, at: JsonPath, rule: string, message: string, where: 'key' | 'value' = 'value'): void {
    this.out.push(diagnostic(source, at, rule, message, where));
  }

  /** $ref names, enum openness, and x-svc-enum values anywhere inside a schema. */
  schema(source: SourceFile, node: unknown, at: JsonPath): void {
    if (Array.isArray(node)) {
      node.forEach((item, i) => this.schema(source, item, [...at, i]));
      return;
    }
    if (!isObj(node)) return;
    if ('$ref' in node) {
      const ref = node.$ref;
      if (typeof ref !== 'string' || !this.known.schemas.has(ref)) {
        const hint = typeof ref === 'string' && ref.includes('/') ? ` Write the bare name (e.g. $ref: ${ref.split('/').pop()}).` : '';
        this.report(
          source,
          [...at, '$ref'],
          'unknown-ref',
          `$ref ${JSON.stringify(ref)} names no schema in schemas/.${hint || ' Use the name of a schema defined in contract/schemas/*.yaml, or define it there.'}`,
        );
      }
    }
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
    if ('x-svc-enum' in node && node['x-svc-enum'] !== 'open' && node['x-svc-enum'] !== 'closed') {
      this.report(
        source,
        [...at, 'x-svc-enum'],
        'enum-without-openness',
        `x-svc-enum is ${JSON.stringify(node['x-svc-enum'])}. Write x-svc-enum: open or x-svc-enum: closed.`,
      );
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
    problems: new Set(Object.keys(asObj(svc.problems))),
    eventTypes: new Set(asArray(svc.eventTypes).map((e) => String(asObj(e).name))),
    principals: new Set(asArray(svc.principals).map((p) => String(asObj(p).name))),
  };
}

function checkSvc(source: SourceFile, c: Checker): void {
  const svc = asObj(source.data);
  for (const [code, raw] of Object.entries(asObj(svc.problems))) {
    const p = asObj(raw);
    if (!Number.isInteger(p.status) || (p.status as number) < 400 || (p.status as number) > 599)
      c.report(source, ['problems', code, 'status'], 'invalid-problem', `Problem ${code} has status ${JSON.stringify(p.status)}. Give it an HTTP error status (400-599).`);
    if (!['after_fix', 'after_delay', 'now'].includes(String(p.retry)))
      c.report(source, ['problems', code, 'retry'], 'invalid-problem', `Problem ${code} has retry ${JSON.stringify(p.retry)}. Use after_fix, after_delay or now.`);
    if (typeof p.title !== 'string')
      c.report(source, ['problems', code], 'invalid-problem', `Problem ${code} has no title. Add a one-line title.`);
  }
  if (typeof asObj(svc.info).version !== 'string')
    c.report(source, ['info'], 'missing-field', 'svc.yaml has no info.version. Add the contract version (e.g. 1.0.0).');
}

interface OpSeen {
  source: SourceFile;
  at: JsonPath;
}

function where(seen: OpSeen): string {
  const p = positionOf(seen.source, seen.at);
  return `${seen.source.file}:${p.line}:${p.col}`;
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
  const label = typeof id === 'string' ? id : 'This operation';
  if (typeof id !== 'string' || !OPERATION_ID.test(id)) {
    c.report(
      source,
      [...at, 'id'],
      'unknown-operation-id-shape',
      `Operation id ${JSON.stringify(id)} is not <family>.<name>[.<name>] in lower snake_case. Rename it, e.g. tasks.create or webhooks.endpoint.rotate_secret.`,
    );
  } else {
    const first = ids.get(id);
    if (first)
      c.report(source, [...at, 'id'], 'duplicate-operation-id', `Operation id ${id} is already defined at ${where(first)}. Give each operation its own id.`);
    else ids.set(id, { source, at: [...at, 'id'] });
    if (family !== null && id.split('.')[0] !== family)
      c.report(source, [...at, 'id'], 'family-mismatch', `Operation ${id} is in family ${family} but its id starts with ${id.split('.')[0]}. Start the id with "${family}." or move it to families/${id.split('.')[0]}.yaml.`);
  }
  if (typeof op.summary !== 'string' || !op.summary.trim())
    c.report(source, at, 'missing-field', `${label} has no summary. Add a one-line summary.`);

  const kind = op.kind;
  if (kind !== 'read' && kind !== 'command')
    c.report(source, 'kind' in op ? [...at, 'kind'] : at, 'invalid-kind', `${label} has kind ${JSON.stringify(kind)}. Write kind: read or kind: command.`);
  if (kind === 'command' && !('tier' in op))
    c.report(source, at, 'command-without-tier', `Command ${label} has no tier. Add tier: 1 (runs at once), 2 or 3 (becomes a proposal).`);
  if (kind === 'read' && 'tier' in op && op.tier !== null)
    c.report(source, [...at, 'tier'], 'read-with-tier', `Read ${label} has a tier. Remove tier: only commands are tiered.`, 'key');
  if (kind === 'command' && 'tier' in op && ![1, 2, 3].includes(op.tier as number))
    c.report(source, [...at, 'tier'], 'invalid-tier', `${label} has tier ${JSON.stringify(op.tier)}. Use tier 1, 2 or 3.`);
  checkSubject(c, source, at, label, op);

  if (!('scope' in op))
    c.report(source, at, 'missing-field', `${label} has no scope. Add scope: <a scope from svc.yaml>, or scope: null for any credential.`);
  else if (op.scope !== null && !c.known.scopes.has(String(op.scope)))
    c.report(source, [...at, 'scope'], 'unknown-scope', `Scope ${JSON.stringify(op.scope)} is not declared in svc.yaml. Use one of the scopes in svc.yaml, or add it there (and adjust totals.scopes).`);

  if (!Array.isArray(op.audience) || op.audience.length === 0)
    c.report(source, 'audience' in op ? [...at, 'audience'] : at, 'unknown-audience', `${label} has no audience list. Add audience: [operator, client_admin, service_account] (the principals that may call it).`);
  else
    op.audience.forEach((a, i) => {
      if (!c.known.principals.has(String(a)))
        c.report(source, [...at, 'audience', i], 'unknown-audience', `Audience ${JSON.stringify(a)} is not a principal in svc.yaml. Use ${[...c.known.principals].join(', ')}.`);
    });

  const http = asObj(op.http);
  const method = typeof http.method === 'string' ? http.method : '';
  const opPath = typeof http.path === 'string' ? http.path : '';
  if (!(HTTP_METHODS as readonly string[]).includes(method))
    c.report(source, 'method' in http ? [...at, 'http', 'method'] : [...at, 'http'], 'invalid-method', `${label} has HTTP method ${JSON.stringify(http.method)}. Use one of ${HTTP_METHODS.join(', ')}.`);
  if (!opPath.startsWith('/'))
    c.report(source, 'path' in http ? [...at, 'http', 'path'] : [...at, 'http'], 'invalid-path', `${label} has path ${JSON.stringify(http.path)}. Write an absolute path such as /v1/tasks/{task_id}.`);
  if ('status' in http && (!Number.isInteger(http.status) || (http.status as number) < 200 || (http.status as number) > 299))
    c.report(source, [...at, 'http', 'status'], 'invalid-status', `${label} has success status ${JSON.stringify(http.status)}. Use a 2xx status (200, or 201 for creating POSTs).`);
  if (method && opPath) {
    const shape = routeShape(method, opPath);
    const first = routes.get(shape);
    if (first)
      c.report(source, [...at, 'http', 'path'], 'duplicate-route', `${method} ${opPath} is already routed at ${where(first)}. Give each operation its own method and path.`);
    else routes.set(shape, { source, at: [...at, 'http', 'path'] });
  }

  if (!isObj(op.input))
    c.report(source, at, 'missing-field', `${label} has no input schema. Add input: {properties: {...}} (input: {properties: {}} when it takes none).`);
  else {
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
    if (!(String(q) in props))
      c.report(source, [...at, 'http', 'query', i], 'unknown-query-input', `http.query names ${JSON.stringify(q)}, which is not an input property. List only input properties.`);
  }

  for (const key of ['output', 'result', 'page'] as const) if (key in op) c.schema(source, op[key], [...at, key]);
  if (kind === 'read' && !('output' in op) && !('page' in op))
    c.report(source, at, 'missing-output', `Read ${label} has neither output nor page. Add output: {$ref: ...} (or page: {$ref: ...} for a paged list).`);
  if (kind === 'read' && 'output' in op && 'page' in op)
    c.report(source, [...at, 'page'], 'missing-output', `Read ${label} has both output and page. Keep one: page for paged lists, output otherwise.`, 'key');
  if (kind === 'command' && !('result' in op))
    c.report(source, at, 'missing-output', `Command ${label} has no result. Add result: {$ref: ...} (what result holds when it ran).`);
  if ('stream' in op && op.stream !== 'sse')
    c.report(source, [...at, 'stream'], 'invalid-value', `${label} has stream ${JSON.stringify(op.stream)}. The only stream kind is sse.`);

  if ('idempotency' in op && !['required', 'honoured', 'none'].includes(String(op.idempotency)))
    c.report(source, [...at, 'idempotency'], 'invalid-value', `${label} has idempotency ${JSON.stringify(op.idempotency)}. Use required, honoured or none.`);
  if ('ifMatch' in op && !['required', 'none'].includes(String(op.ifMatch)))
    c.report(source, [...at, 'ifMatch'], 'invalid-value', `${label} has ifMatch ${JSON.stringify(op.ifMatch)}. Use required or none.`);
  if (kind === 'command' && method === 'POST' && http.status === 201 && op.idempotency !== 'required')
    c.report(source, 'idempotency' in op ? [...at, 'idempotency'] : at, 'creating-post-without-idempotency', `Creating POST ${label} (status 201) does not require an Idempotency-Key. Add idempotency: required.`);
  if (kind === 'read' && (('idempotency' in op && op.idempotency !== 'none') || ('ifMatch' in op && op.ifMatch !== 'none')))
    c.report(source, 'idempotency' in op ? [...at, 'idempotency'] : [...at, 'ifMatch'], 'invalid-value', `Read ${label} declares idempotency or ifMatch. Remove them: they apply to commands only.`, 'key');

  asArray(op.errors).forEach((code, i) => {
    if (!c.known.problems.has(String(code)))
      c.report(source, [...at, 'errors', i], 'unknown-problem-code', `Problem code ${JSON.stringify(code)} is not in svc.yaml problems. Use a declared code, or declare it in svc.yaml with status, title and retry.`);
  });
  asArray(op.emits).forEach((type, i) => {
    if (!c.known.eventTypes.has(String(type)))
      c.report(source, [...at, 'emits', i], 'unknown-event-type', `Event type ${JSON.stringify(type)} is not in svc.yaml eventTypes. Use a declared event type, or declare it there (and adjust totals.eventTypes).`);
  });

  const mcp = asObj(op.mcp);
  if (mcp.tool === true) {
    if (kind === 'command') {
      const missing = ['destructive', 'idempotent'].filter((k) => typeof mcp[k] !== 'boolean');
      if (missing.length)
        c.report(source, [...at, 'mcp'], 'tool-without-annotations', `Command tool ${label} does not say ${missing.join(' and ')}. Add ${missing.map((k) => `${k}: true|false`).join(' and ')} to mcp.`);
    }
    if (kind === 'command') checkAnnotations(source, op, method, at, label, c);
    if ('openWorld' in mcp && typeof mcp.openWorld !== 'boolean')
      c.report(source, [...at, 'mcp', 'openWorld'], 'invalid-value', `mcp.openWorld of ${label} is not a boolean. Write openWorld: true or false.`);
  } else if (typeof mcp.reason !== 'string' || !mcp.reason.trim()) {
    c.report(source, 'mcp' in op ? [...at, 'mcp'] : at, 'non-tool-without-reason', `${label} is not an MCP tool and gives no reason. Add mcp: {tool: false, reason: "<why agents do not get it>"} or mcp: {tool: true, ...}.`);
  }
}

/**
 * Annotations follow rules the contract states: a command that overwrites stored values (PATCH, PUT),
 * removes them (DELETE) or reaches a state with no way back (`final: true`) is destructive; a Tier 2/3
 * command files a new approval on every call, so it is not idempotent.
 */
function checkAnnotations(source: SourceFile, op: Obj, method: string, at: JsonPath, label: string, c: Checker): void {
  const mcp = asObj(op.mcp);
  if ('final' in op && typeof op.final !== 'boolean')
    c.report(source, [...at, 'final'], 'invalid-value', `final of ${label} is not a boolean. Write final: true (the command reaches a state with no way back) or remove it.`);
  const why = method === 'PATCH' || method === 'PUT' ? `it overwrites stored values (${method})` : method === 'DELETE' ? 'it removes stored values (DELETE)' : op.final === true ? 'it reaches a state with no way back (final: true)' : null;
  if (why && mcp.destructive === false)
    c.report(source, [...at, 'mcp', 'destructive'], 'annotation-contradiction', `${label} says destructive: false, but ${why}. Write destructive: true.`);
  if ((op.tier === 2 || op.tier === 3) && mcp.idempotent === true)
    c.report(source, [...at, 'mcp', 'idempotent'], 'annotation-contradiction', `${label} says idempotent: true, but as a Tier ${op.tier} command every call without a reused idempotency key files a new approval. Write idempotent: false.`);
}

export function checkContract(contract: LoadedContract): Diagnostic[] {
  return [...checkKeys(contract), ...checkContractRules(contract), ...checkDeprecations(contract)];
}

function checkContractRules(contract: LoadedContract): Diagnostic[] {
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
  const c = new Checker({ ...base, schemas });
  c.out.push(...early, ...dupSchemas);
  if (contract.svc?.data) checkSvc(contract.svc, c);
  for (const file of contract.schemaFiles) {
    for (const [name, schema] of Object.entries(asObj(file.data))) {
      if (!/^[A-Z][A-Za-z0-9]*$/.test(name))
        c.report(file, [name], 'invalid-schema-name', `Schema name ${name} is not PascalCase. Rename it (e.g. TaskDraft).`, 'key');
      c.schema(file, schema, [name]);
    }
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
    if (typeof data.family !== 'string')
      c.report(file, [], 'missing-field', `This family file has no family name. Add family: ${stem} at the top.`);
    else {
      family = data.family;
      families.add(family);
      if (family !== stem)
        c.report(file, ['family'], 'family-mismatch', `The file is named ${stem}.yaml but declares family ${family}. Rename the file to ${family}.yaml or fix family.`);
    }
    if (!Array.isArray(data.operations))
      c.report(file, [], 'missing-field', 'This family file has no operations list. Add operations: [...].');
    asArray(data.operations).forEach((op, i) => {
      const o = asObj(op);
      if (o.kind === 'read') reads++;
      if (o.kind === 'command') commands++;
      if (asObj(o.mcp).tool === true) tools++;
      checkOperation(file, family, o, ['operations', i], c, ids, routes);
    });
  }

  // Counting is meaningless while a file does not parse: the syntax errors say enough.
  if (contract.svc?.data && !contract.familyFiles.some((f) => f.data === null)) {
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
    if (!('totals' in svc))
      c.report(contract.svc, [], 'totals', `svc.yaml has no totals. Add totals: {${TOTAL_KEYS.join(', ')}}.`);
    else
      for (const key of TOTAL_KEYS) {
        if (declared[key] !== actual[key])
          c.report(contract.svc, ['totals', key], 'totals', `totals.${key} declares ${JSON.stringify(declared[key] ?? null)} but the contract has ${actual[key]}. Add or remove ${key} until the count matches, or correct the declared total.`, 'key');
      }
  }
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
