// Step 2a: the shape of every contract file, checked against the contract format
// (generator/contract-format/contract.schema.json, with the JSON Schema 2020-12 meta-schema for the
// schemas inside the contract). Every failure of every file becomes one located diagnostic that says,
// in the author's terms, what is wrong and what to write instead; ajv's own wording never reaches the
// author. The paths that failed are returned too, so that later rules stay quiet about them.
import type { ErrorObject } from 'ajv';
import { formatValidators } from './contract-format/index.ts';
import type { LoadedContract } from './load.ts';
import { isObj } from './raw.ts';
import { diagnostic, pathKey, type Diagnostic, type JsonPath, type SourceFile } from './source.ts';
import { didYouMean } from './suggest.ts';
import { identityMemo } from './session.ts';

export type FileKind = 'svc' | 'schemas' | 'family';

export interface ShapeReport {
  diagnostics: Diagnostic[];
  /** Per file (SourceFile.file): the JSON paths whose shape is wrong. */
  broken: Map<string, JsonPath[]>;
}

const SCHEMA_PARTS = new Set(['input', 'output', 'result', 'page']);
const COMMA_HINT = ' (A comma inside an unquoted flow-map value starts a new key: quote the value.)';
const JSON_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'];

type Err = ErrorObject & { propertyName?: string };

function decodePointer(pointer: string, data: unknown): JsonPath {
  const out: (string | number)[] = [];
  let node = data;
  if (!pointer) return out;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(seg)) {
      out.push(Number(seg));
      node = node[Number(seg)];
    } else {
      out.push(seg);
      node = isObj(node) ? node[seg] : undefined;
    }
  }
  return out;
}

function dotted(segs: JsonPath): string {
  return segs.map((s, i) => (typeof s === 'number' ? `[${s}]` : `${i ? '.' : ''}${s}`)).join('');
}

/** A value as the author wrote it: strings quoted, lists and maps by their kind. */
function show(v: unknown): string {
  if (v === undefined) return 'missing';
  if (Array.isArray(v)) return v.length ? 'a list' : 'an empty list';
  if (isObj(v)) return 'a map';
  return JSON.stringify(v);
}

function describe(v: unknown): string {
  if (v === null) return 'empty (null)';
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  if (typeof v === 'number') return `the number ${v}`;
  if (typeof v === 'boolean') return `${v}`;
  return show(v);
}

function bare(v: unknown): string {
  return v === null ? 'null' : typeof v === 'string' ? v : JSON.stringify(v);
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean (true or false)',
  array: 'a list',
  object: 'a map',
  null: 'null',
};

function expectedTypes(types: string[]): string {
  // Only a schema may be a map or a boolean (true admits anything, false nothing).
  if (types.includes('object') && types.includes('boolean')) return 'a map (a schema) or true/false';
  const words = [...new Set(types)].map((t) => TYPE_WORDS[t] ?? t);
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : words[0];
}

/** Names the thing at a path the way its author would. */
class Namer {
  constructor(
    readonly kind: FileKind,
    readonly data: unknown,
  ) {}

  private at(p: JsonPath): unknown {
    let node = this.data;
    for (const seg of p) node = Array.isArray(node) ? node[seg as number] : isObj(node) ? node[seg] : undefined;
    return node;
  }

  name(p: JsonPath): string {
    if (this.kind === 'family') {
      if (p[0] === 'operations' && typeof p[1] === 'number') {
        const op = this.at(p.slice(0, 2));
        const id = isObj(op) && typeof op.id === 'string' && op.id ? op.id : null;
        const rest = p.slice(2);
        if (rest.length === 1 && rest[0] === 'id') return 'Operation id';
        const label = id ?? `operations[${p[1]}]`;
        return rest.length ? `${label}'s ${dotted(rest)}` : label;
      }
      return p.length ? dotted(p) : 'This family file';
    }
    if (this.kind === 'schemas') {
      if (!p.length) return 'This schemas file';
      const rest = p.slice(1);
      return rest.length ? `${p[0]}'s ${dotted(rest)}` : `Schema ${p[0]}`;
    }
    if (!p.length) return 'svc.yaml';
    const [group, key, ...rest] = p;
    let label: string | null = null;
    const entry = key === undefined ? undefined : this.at([group, key]);
    const field = (name: string) => (isObj(entry) && typeof entry[name] === 'string' ? (entry[name] as string) : null);
    if (typeof key === 'number') {
      const named = { scopes: 'Scope', principals: 'Principal', eventTypes: 'Event type' }[group as string];
      if (named && field('name')) label = `${named} ${field('name')}`;
      if (group === 'versions' && field('version')) label = `Version ${field('version')}`;
      if (group === 'changelog' && field('version')) label = `Changelog entry ${field('version')}`;
    } else if (group === 'mcpDynamic' && key === 'tools' && typeof rest[0] === 'number') {
      // A meta-tool, by its name: "Meta-tool svc.api.search's role".
      const tool = this.at(['mcpDynamic', 'tools', rest[0]]);
      const name = isObj(tool) && typeof tool.name === 'string' && tool.name ? tool.name : `mcpDynamic.tools[${rest[0]}]`;
      const after = rest.slice(1);
      return after.length ? `Meta-tool ${name}'s ${dotted(after)}` : `Meta-tool ${name}`;
    } else if (key !== undefined && (group === 'problems' || group === 'roles')) label = `${group === 'problems' ? 'Problem' : 'Role'} ${key}`;
    if (!label) return dotted(p);
    return rest.length ? `${label}'s ${dotted(rest)}` : label;
  }
}

interface Ctx {
  source: SourceFile;
  kind: FileKind;
  namer: Namer;
  out: Diagnostic[];
  broken: JsonPath[];
  /** instancePath -> required keys it lacks that no misspelled key explains yet. */
  absent: Map<string, Set<string>>;
}

function inSchemaPart(kind: FileKind, p: JsonPath): boolean {
  if (kind === 'schemas') return p.length >= 1;
  return kind === 'family' && p[0] === 'operations' && typeof p[2] === 'string' && SCHEMA_PARTS.has(p[2]);
}

function annotation(schema: unknown, key: string): string | undefined {
  return isObj(schema) && typeof schema[key] === 'string' ? (schema[key] as string) : undefined;
}

function lastKey(p: JsonPath): string | null {
  const last = p.at(-1);
  return typeof last === 'string' ? last : null;
}

/**
 * What to write instead of a value of the wrong type. `specific` when the value itself shows what was
 * meant ("yes" for true, "404" for 404, a bare word for a one-item list, a type name for a schema);
 * otherwise a node's own x-fix says it better.
 */
function typeFix(p: JsonPath, v: unknown, types: string[], kind: FileKind): { text: string; specific: boolean } {
  const key = lastKey(p);
  const write = (x: string) => ({ text: key ? `Write ${key}: ${x}.` : `Write ${x}.`, specific: true });
  const general = (text: string) => ({ text, specific: false });
  const s = typeof v === 'string' ? v : null;
  if (types.length === 1 && types[0] === 'boolean') {
    if (['yes', 'true', 'on', 'y'].includes(s?.toLowerCase() ?? '')) return write('true');
    if (['no', 'false', 'off', 'n'].includes(s?.toLowerCase() ?? '')) return write('false');
    return general(key ? `Write ${key}: true or ${key}: false.` : 'Write true or false.');
  }
  if (types.includes('array') && !types.includes('object') && v !== null && !Array.isArray(v) && !isObj(v)) return write(`[${bare(v)}]`);
  if (types.includes('object') && s !== null && inSchemaPart(kind, p)) {
    if (JSON_TYPES.includes(s)) return write(`{ type: ${s} }`);
    if (/^[A-Z][A-Za-z0-9]*$/.test(s)) return write(`{ $ref: ${s} }`);
    return general(key ? `Write ${key} as a schema: ${key}: { type: ... }.` : 'Write a schema: { type: ... }.');
  }
  if (types.includes('object')) return general(key ? `Write ${key} as a map: ${key}: { ... }.` : 'Write a map: { ... }.');
  if ((types.includes('number') || types.includes('integer')) && s !== null) {
    if (s.trim() !== '' && !Number.isNaN(Number(s))) return { text: `${key ? `Write ${key}: ${s}` : `Write ${s}`} without quotes.`, specific: true };
    return general(key ? `Write a number, e.g. ${key}: ${types.includes('number') ? 0 : 1}.` : 'Write a number.');
  }
  if (types.includes('string') && (typeof v === 'number' || typeof v === 'boolean')) return { text: `Quote it: ${key ? `${key}: ` : ''}"${v}".`, specific: true };
  return general(`Write ${expectedTypes(types)}.`);
}

function ruleFor(ctx: Ctx, e: Err, p: JsonPath, fallback: string): string {
  return annotation(e.parentSchema, 'x-rule') ?? (inSchemaPart(ctx.kind, p) ? 'invalid-schema' : fallback);
}

function report(ctx: Ctx, p: JsonPath, rule: string, message: string, where: 'key' | 'value' = 'value', brokenPath: JsonPath = p): void {
  ctx.out.push(diagnostic(ctx.source, p, rule, message, where));
  ctx.broken.push(brokenPath);
}

/**
 * An unknown key. When it is a near miss of an allowed key, the message says which; when that key is
 * also required and absent (`sumary:` for summary), the "has no summary" error is its consequence and
 * is dropped (`absent` lists the required keys the owner lacks, and the guessed one is removed).
 */
function unknownKey(ctx: Ctx, owner: JsonPath, key: string, allowed: string[], value: unknown, absent: Set<string>): void {
  const guess = didYouMean(key, allowed);
  const where = `${ctx.namer.name(owner)} has the unknown key ${JSON.stringify(key)}.`;
  if (guess) {
    const missing = absent.delete(guess) ? ` (so it has no ${guess})` : '';
    report(ctx, [...owner, key], 'unknown-key', `${where} Did you mean ${guess}${missing}? Rename it to ${guess}.`, 'key');
    return;
  }
  const comma = value === null ? COMMA_HINT : '';
  report(ctx, [...owner, key], 'unknown-key', `${where} Allowed keys: ${allowed.join(', ')}.${comma}`, 'key');
}

function formatName(format: string): string {
  return { regex: 'regular expression', date: 'date (YYYY-MM-DD)', 'date-time': 'date-time (RFC 3339)', 'uri-reference': 'URI reference', uri: 'URI' }[format] ?? format;
}

function regexProblem(v: unknown): string {
  try {
    new RegExp(String(v), 'u');
    return '';
  } catch (err) {
    return ` (${(err as Error).message.replace(/^Invalid regular expression: /, '')})`;
  }
}

const COMPARISON: Record<string, string> = { '>=': 'at least', '<=': 'at most', '>': 'more than', '<': 'less than' };

function one(ctx: Ctx, e: Err, p: JsonPath, v: unknown, siblings: Err[]): void {
  const absent = ctx.absent.get(e.instancePath) ?? new Set<string>();
  const Subject = ctx.namer.name(p);
  const fix = annotation(e.parentSchema, 'x-fix');
  const key = lastKey(p);
  const params = e.params as Record<string, unknown>;
  if (v === null && key !== null && ['type', 'enum', 'const', 'pattern'].includes(e.keyword)) {
    // `key:` with nothing after it: the value was left out (or a flow map was cut at a comma).
    report(ctx, p, 'null-key', `${ctx.namer.name(p.slice(0, -1))} has ${key} with no value (null). Give ${key} a value or remove the key.`, 'key');
    return;
  }
  switch (e.keyword) {
    case 'type': {
      const types = (Array.isArray(e.schema) ? e.schema : String(e.schema).split(',')) as string[];
      if (v === null && !p.length) {
        const what = { svc: 'the service-wide facts (info, totals, scopes, ...)', schemas: 'its schemas (Name: { type: ... }), or delete the file', family: 'family: <name> and operations: [...], or delete the file' }[ctx.kind];
        report(ctx, p, 'missing-field', `${Subject} is empty. Write ${what}.`);
        return;
      }
      if (v === null) {
        report(ctx, p, ruleFor(ctx, e, p, 'invalid-type'), `${Subject} is empty (null). Write ${expectedTypes(types)} or remove the item.`);
        return;
      }
      const instead = typeFix(p, v, types, ctx.kind);
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-type'), `${Subject} is ${describe(v)}, but it must be ${expectedTypes(types)}. ${fix && !instead.specific ? fix : instead.text}`);
      return;
    }
    case 'enum':
    case 'const': {
      const allowed = e.keyword === 'enum' ? (params.allowedValues as unknown[]) : [params.allowedValue];
      const guess = didYouMean(v, allowed);
      const list = allowed.map(bare).join(', ');
      const what = e.keyword === 'enum' ? `, which is not one of ${list}.` : `, but it must be ${bare(allowed[0])}.`;
      const todo = guess !== null ? ` Did you mean ${guess}? Write ${key ? `${key}: ` : ''}${guess}.` : ` ${fix ?? (e.keyword === 'enum' ? 'Use one of them.' : `Write ${key ? `${key}: ` : ''}${bare(allowed[0])}.`)}`;
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-value'), `${Subject} is ${show(v)}${what}${todo}`);
      return;
    }
    case 'required': {
      const missing = String(params.missingProperty);
      if (!absent.has(missing)) return; // explained by a misspelled key
      const prop = isObj(e.parentSchema) && isObj(e.parentSchema.properties) ? e.parentSchema.properties[missing] : undefined;
      const add = annotation(prop, 'x-missing') ?? `${missing}: ...`;
      report(ctx, p, ruleFor(ctx, e, p, 'missing-field'), `${Subject} has no ${missing}. Add ${add}.`, 'value', [...p, missing]);
      return;
    }
    case 'additionalProperties': {
      const allowed = isObj(e.parentSchema) && isObj(e.parentSchema.properties) ? Object.keys(e.parentSchema.properties) : [];
      const k = String(params.additionalProperty);
      unknownKey(ctx, p, k, allowed, isObj(v) ? v[k] : undefined, absent);
      return;
    }
    case 'propertyNames': {
      const k = String(params.propertyName);
      const inner = siblings.find((s) => s !== e && s.propertyName === k && s.instancePath === e.instancePath);
      const value = isObj(v) ? v[k] : undefined;
      if (!inner || inner.keyword === 'enum') {
        const allowed = inner ? (inner.params as { allowedValues: string[] }).allowedValues : [];
        unknownKey(ctx, p, k, allowed, value, absent);
        return;
      }
      const expect = annotation(inner.parentSchema, 'x-expect') ?? `of the form ${String(inner.schema)}`;
      const rule = annotation(inner.parentSchema, 'x-rule') ?? 'invalid-value';
      const innerFix = annotation(inner.parentSchema, 'x-fix');
      report(ctx, [...p, k], rule, `${ctx.namer.name(p)} has the key ${JSON.stringify(k)}, which is not ${expect}.${innerFix ? ` ${innerFix}` : ''}`, 'key');
      return;
    }
    case 'pattern': {
      const expect = annotation(e.parentSchema, 'x-expect') ?? `of the form /${String(e.schema)}/`;
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-value'), `${Subject} is ${show(v)}, which is not ${expect}.${fix ? ` ${fix}` : ''}`);
      return;
    }
    case 'format': {
      const format = String(params.format);
      const detail = format === 'regex' ? regexProblem(v) : '';
      const todo = fix ?? (format === 'regex' ? 'Fix the regular expression (ECMA-262, as ajv compiles it).' : key === '$ref' ? 'Write the bare name of a schema in schemas/.' : `Write a valid ${formatName(format)}.`);
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-value'), `${Subject} is ${show(v)}, which is not a valid ${formatName(format)}${detail}. ${todo}`);
      return;
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const bound = `${COMPARISON[String(params.comparison)] ?? String(params.comparison)} ${String(params.limit)}`;
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-value'), `${Subject} is ${show(v)}, but it must be ${bound}.${fix ? ` ${fix}` : ''}`);
      return;
    }
    case 'multipleOf':
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-value'), `${Subject} is ${show(v)}, but it must be a multiple of ${String(params.multipleOf)}.${fix ? ` ${fix}` : ''}`);
      return;
    case 'minItems':
    case 'maxItems':
    case 'minLength':
    case 'maxLength':
    case 'minProperties':
    case 'maxProperties': {
      const unit = e.keyword.endsWith('Items') ? 'item' : e.keyword.endsWith('Length') ? 'character' : 'key';
      const limit = Number(params.limit);
      const least = e.keyword.startsWith('min');
      const now = Array.isArray(v) && !v.length ? 'is an empty list' : `has ${Array.isArray(v) ? v.length : typeof v === 'string' ? v.length : isObj(v) ? Object.keys(v).length : 0} ${unit}(s)`;
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-value'), `${Subject} ${now}, but it must have ${least ? 'at least' : 'at most'} ${limit} ${unit}${limit === 1 ? '' : 's'}.${fix ? ` ${fix}` : ''}`);
      return;
    }
    case 'uniqueItems': {
      const j = Number(params.j);
      const item = Array.isArray(v) ? v[j] : undefined;
      report(ctx, [...p, j], ruleFor(ctx, e, p, 'invalid-value'), `${Subject} lists ${show(item)} twice. Remove the second one.`);
      return;
    }
    case 'dependentRequired':
      report(ctx, p, ruleFor(ctx, e, p, 'missing-field'), `${Subject} has ${String(params.property)} but no ${String(params.missingProperty)}. Add ${String(params.missingProperty)}.`);
      return;
    case 'false schema':
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-value'), `${Subject} is not allowed here. Remove it.`);
      return;
    default:
      report(ctx, p, ruleFor(ctx, e, p, 'invalid-value'), `${Subject} does not satisfy the contract format (${e.keyword} in generator/contract-format/contract.schema.json). Compare it with contract/README.md.`);
  }
}

/**
 * ajv's raw list, reduced to what the author must change: a union (anyOf) is reported once, by the
 * branch the value was meant for; `if` and inner property-name errors are folded into their result.
 */
function reduce(errors: Err[], data: unknown): Err[] {
  const drop = new Set<Err>();
  const synthetic: Err[] = [];
  for (const e of errors) {
    if (e.keyword === 'if') drop.add(e);
    if (e.propertyName !== undefined && e.keyword !== 'propertyNames') drop.add(e);
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') continue;
    drop.add(e);
    const atP = errors.filter((x) => x !== e && x.instancePath === e.instancePath && ['type', 'enum', 'const'].includes(x.keyword) && x.propertyName === undefined);
    const v = valueAt(data, e.instancePath);
    const values = atP.filter((x) => x.keyword !== 'type');
    const typed = atP.filter((x) => x.keyword === 'type');
    const listed = values.some((x) => {
      const allowed = x.keyword === 'enum' ? ((x.params as { allowedValues: unknown[] }).allowedValues ?? []) : [(x.params as { allowedValue: unknown }).allowedValue];
      return allowed.some((a) => typeof a === typeof v && a !== null);
    });
    if (listed) typed.forEach((x) => drop.add(x));
    else if (!typed.length) values.forEach((x) => drop.add(x));
    else {
      atP.forEach((x) => drop.add(x));
      const types = typed.flatMap((x) => (Array.isArray(x.schema) ? x.schema : String(x.schema).split(',')) as string[]);
      if (values.length) types.unshift('string');
      synthetic.push({ ...typed[0], schema: [...new Set(types)], parentSchema: e.parentSchema });
    }
  }
  const seen = new Set<string>();
  return [...errors.filter((e) => !drop.has(e)), ...synthetic].filter((e) => {
    const id = `${e.instancePath}\u0000${e.keyword}\u0000${JSON.stringify(e.params)}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

function valueAt(data: unknown, pointer: string): unknown {
  let node = data;
  for (const seg of decodePointer(pointer, data)) node = Array.isArray(node) ? node[seg as number] : isObj(node) ? node[seg] : undefined;
  return node;
}

export function checkFile(source: SourceFile, kind: FileKind): { diagnostics: Diagnostic[]; broken: JsonPath[] } {
  const validators = formatValidators();
  const validate = kind === 'svc' ? validators.svcFile : kind === 'schemas' ? validators.schemasFile : validators.familyFile;
  const ctx: Ctx = { source, kind, namer: new Namer(kind, source.data), out: [], broken: [], absent: new Map() };
  if (validate(source.data)) return { diagnostics: [], broken: [] };
  const raw = (validate.errors ?? []) as Err[];
  for (const e of raw)
    if (e.keyword === 'required') {
      const set = ctx.absent.get(e.instancePath) ?? new Set<string>();
      set.add(String((e.params as { missingProperty: string }).missingProperty));
      ctx.absent.set(e.instancePath, set);
    }
  // Unknown keys first: a misspelled required key explains that key's absence.
  const reduced = reduce(raw, source.data).sort((a, b) => Number(b.keyword === 'additionalProperties' || b.keyword === 'propertyNames') - Number(a.keyword === 'additionalProperties' || a.keyword === 'propertyNames'));
  for (const e of reduced) {
    const p = decodePointer(e.instancePath, source.data);
    one(ctx, e, p, valueAt(source.data, e.instancePath), raw);
  }
  return { diagnostics: ctx.out, broken: ctx.broken };
}

const shapeMemo = identityMemo<SourceFile, { kind: FileKind; result: ReturnType<typeof checkFile> }>();

/** Checks the shape of every parsed file of the contract (files with YAML errors are skipped). */
export function checkShapes(contract: LoadedContract): ShapeReport {
  const report: ShapeReport = { diagnostics: [], broken: new Map() };
  // A file that does not parse has data null: its syntax error is reported instead. An empty file
  // (data null without one) is checked, and is an error.
  const unparsed = new Set(contract.diagnostics.filter((d) => d.rule === 'yaml-syntax').map((d) => d.file));
  const run = (source: SourceFile | null, kind: FileKind) => {
    if (!source || unparsed.has(source.file)) return;
    // A file's shape depends on its content alone: a watcher checks a parsed file once (session.ts).
    const known = shapeMemo.get(source);
    const { diagnostics, broken } = known && known.kind === kind ? known.result : shapeMemo.set(source, { kind, result: checkFile(source, kind) }).result;
    report.diagnostics.push(...diagnostics);
    if (broken.length) report.broken.set(source.file, broken);
  };
  run(contract.svc, 'svc');
  for (const file of contract.schemaFiles) run(file, 'schemas');
  for (const file of contract.familyFiles) run(file, 'family');
  return report;
}

/**
 * Whether a path whose shape is wrong lies at or above `at` in file (a rule about `at` would be a
 * knock-on of it), or, with `below`, also under it.
 */
export function underBroken(broken: Map<string, JsonPath[]> | undefined, file: string, at: JsonPath, below = false): boolean {
  const list = broken?.get(file);
  if (!list) return false;
  const key = pathKey(at);
  return list.some((b) => {
    const bk = pathKey(b);
    return key === bk || key.startsWith(`${bk}\u0000`) || (below && bk.startsWith(`${key}\u0000`));
  });
}

/** Whether a path whose shape is wrong lies at, above or under `at` in file. */
export function touchesBroken(broken: Map<string, JsonPath[]> | undefined, file: string, at: JsonPath): boolean {
  return underBroken(broken, file, at, true);
}
