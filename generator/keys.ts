// Closed key sets: every object of the contract admits only the keys the generator understands.
// An unknown key, or a key whose value is null where null means nothing, is an error with its position
// and the keys that are allowed (a mistyped key, or a YAML flow map cut at a comma, is never ignored).
import type { LoadedContract } from './load.ts';
import { asArray, isObj, type Obj } from './raw.ts';
import { diagnostic, type Diagnostic, type JsonPath, type SourceFile } from './source.ts';

/** Keys whose value may be null because null means something (documented in contract/README.md). */
const NULLABLE = new Set(['scope', 'sunset', 'tier', 'default', 'const', 'enum', 'example', 'examples']);

const SVC_TOP = ['info', 'totals', 'mcpProtocolVersions', 'mcpDynamic', 'versions', 'scopes', 'principals', 'roles', 'problems', 'eventTypes', 'limits', 'changelog'];
const INFO = ['title', 'version', 'description', 'releaseDate', 'decision'];
const TOTALS = ['operations', 'reads', 'commands', 'families', 'tools', 'scopes', 'eventTypes'];
const VERSION = ['version', 'status', 'released', 'since', 'sunset', 'link', 'successor', 'successorLink', 'decision'];
const NAMED = ['name', 'description', 'decision'];
const ROLE = ['labels', 'scopes', 'decision'];
const PROBLEM = ['status', 'title', 'retry', 'retryAfter', 'decision'];
const MCP_DYNAMIC = ['tools', 'decision'];
const DYNAMIC_TOOL = ['name', 'role', 'title', 'description', 'input', 'decision'];
const CHANGELOG = ['version', 'date', 'added', 'deprecated', 'removed', 'corrected', 'decision'];

const FAMILY_TOP = ['family', 'description', 'operations', 'decision'];
const OPERATION = [
  'id', 'summary', 'description', 'kind', 'tier', 'scope', 'audience', 'http', 'input', 'output', 'result', 'page',
  'stream', 'idempotency', 'ifMatch', 'errors', 'emits', 'mcp', 'deprecated', 'decision', 'subject', 'final',
];
const HTTP = ['method', 'path', 'status', 'query', 'decision'];
const MCP = ['tool', 'reason', 'destructive', 'idempotent', 'openWorld', 'decision'];
const DEPRECATED = ['since', 'sunset', 'link', 'successor', 'successorLink', 'decision'];

/** JSON Schema 2020-12 keywords the contract uses or may use, plus the svc extensions it understands. */
const SCHEMA = [
  '$ref', 'type', 'description', 'title', 'enum', 'const', 'default', 'examples', 'example', 'format', 'deprecated', 'readOnly', 'writeOnly',
  'properties', 'required', 'additionalProperties', 'patternProperties', 'propertyNames', 'minProperties', 'maxProperties',
  'items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains',
  'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'contentMediaType', 'contentEncoding',
  'decision', 'x-svc-enum', 'x-svc-secret', 'x-svc-personal',
];
const SCHEMA_SET = new Set(SCHEMA);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs']);
const SCHEMA_ONE = new Set(['items', 'additionalProperties', 'propertyNames', 'contains', 'not', 'if', 'then', 'else']);
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

class KeyChecker {
  readonly out: Diagnostic[] = [];
  constructor(readonly source: SourceFile) {}

  /** Checks one object against its allowed keys; returns it (or {} when it is not an object). */
  keys(node: unknown, at: JsonPath, allowed: readonly string[], what: string): Obj {
    if (!isObj(node)) return {};
    for (const [key, value] of Object.entries(node)) {
      if (!allowed.includes(key))
        this.out.push(
          diagnostic(this.source, [...at, key], 'unknown-key', `${what} has the unknown key ${JSON.stringify(key)}. Allowed keys: ${allowed.join(', ')}. (A comma inside an unquoted flow-map value starts a new key: quote the value.)`, 'key'),
        );
      else if (value === null && !NULLABLE.has(key))
        this.out.push(diagnostic(this.source, [...at, key], 'null-key', `${what} has ${key} with no value (null). Give ${key} a value or remove the key.`, 'key'));
    }
    return node;
  }

  each(list: unknown, at: JsonPath, allowed: readonly string[], what: string): void {
    asArray(list).forEach((item, i) => this.keys(item, [...at, i], allowed, what));
  }

  schema(node: unknown, at: JsonPath): void {
    if (!isObj(node)) return;
    this.keys(node, at, SCHEMA, 'A schema');
    for (const [key, value] of Object.entries(node)) {
      if (!SCHEMA_SET.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && isObj(value)) for (const [name, sub] of Object.entries(value)) this.schema(sub, [...at, key, name]);
      else if (SCHEMA_ONE.has(key) && isObj(value)) this.schema(value, [...at, key]);
      else if (SCHEMA_LIST.has(key)) asArray(value).forEach((sub, i) => this.schema(sub, [...at, key, i]));
    }
  }
}

function checkSvcKeys(source: SourceFile, k: KeyChecker): void {
  const svc = k.keys(source.data, [], SVC_TOP, 'svc.yaml');
  k.keys(svc.info, ['info'], INFO, 'info');
  k.keys(svc.totals, ['totals'], TOTALS, 'totals');
  k.each(svc.versions, ['versions'], VERSION, 'A version');
  k.each(svc.scopes, ['scopes'], NAMED, 'A scope');
  k.each(svc.principals, ['principals'], NAMED, 'A principal');
  k.each(svc.eventTypes, ['eventTypes'], NAMED, 'An event type');
  k.each(svc.changelog, ['changelog'], CHANGELOG, 'A changelog entry');
  const dynamic = k.keys(svc.mcpDynamic, ['mcpDynamic'], MCP_DYNAMIC, 'mcpDynamic');
  asArray(dynamic.tools).forEach((tool, i) => {
    k.keys(tool, ['mcpDynamic', 'tools', i], DYNAMIC_TOOL, 'A meta-tool');
    if (isObj(tool)) k.schema(tool.input, ['mcpDynamic', 'tools', i, 'input']);
  });
  if (isObj(svc.roles)) for (const [name, role] of Object.entries(svc.roles)) k.keys(role, ['roles', name], ROLE, `Role ${name}`);
  if (isObj(svc.problems)) for (const [code, p] of Object.entries(svc.problems)) k.keys(p, ['problems', code], PROBLEM, `Problem ${code}`);
  // limits: named numbers (any name), plus its decision note.
  if (isObj(svc.limits))
    for (const [name, value] of Object.entries(svc.limits)) {
      if (name === 'decision' ? typeof value === 'string' : typeof value === 'number') continue;
      k.out.push(diagnostic(source, ['limits', name], value === null ? 'null-key' : 'invalid-value', `limits.${name} is ${JSON.stringify(value)}. A limit is a number (limits also admit one decision note).`, 'key'));
    }
}

function checkFamilyKeys(source: SourceFile, k: KeyChecker): void {
  const family = k.keys(source.data, [], FAMILY_TOP, 'A family file');
  asArray(family.operations).forEach((raw, i) => {
    const at = ['operations', i];
    const op = k.keys(raw, at, OPERATION, `Operation ${isObj(raw) && typeof raw.id === 'string' ? raw.id : i}`);
    const label = typeof op.id === 'string' ? op.id : `Operation ${i}`;
    k.keys(op.http, [...at, 'http'], HTTP, `http of ${label}`);
    k.keys(op.mcp, [...at, 'mcp'], MCP, `mcp of ${label}`);
    k.keys(op.deprecated, [...at, 'deprecated'], DEPRECATED, `deprecated of ${label}`);
    for (const key of ['input', 'output', 'result', 'page']) k.schema(op[key], [...at, key]);
  });
}

export function checkKeys(contract: LoadedContract): Diagnostic[] {
  const out: Diagnostic[] = [];
  const run = (source: SourceFile | null, fn: (s: SourceFile, k: KeyChecker) => void) => {
    if (!source || source.data === null) return;
    const k = new KeyChecker(source);
    fn(source, k);
    out.push(...k.out);
  };
  run(contract.svc, checkSvcKeys);
  for (const file of contract.familyFiles) run(file, checkFamilyKeys);
  for (const file of contract.schemaFiles)
    run(file, (s, k) => {
      if (isObj(s.data)) for (const [name, schema] of Object.entries(s.data)) k.schema(schema, [name]);
    });
  return out;
}
