// generated/types.ts one unit at a time, memoised: the same text as openapi-typescript's transform of
// the whole document (types.ts), for a fraction of the work when units repeat or did not change.
//
// A unit is one member of the file's top-level interfaces: a path (its `paths` member and the
// `operations` members its methods inject), a webhook (likewise), or a component schema. Each is
// transformed by openapi-typescript's own exported transforms and printed by its own printer, then the
// printed members are cut out and concatenated in the order transformSchema would visit them.
//
// The memo key is the unit's content with its names replaced by placeholders (the unit's own key, the
// operationIds it declares and the component names its $refs point to), so a unit that differs from
// another only by those names (a family cloned under another name) is transformed once. The printed
// text has the placeholders; the unit's real names are put back. Every $ref the transform resolves is
// recorded with a fingerprint of what it resolved to, and an entry is reused only when the same refs,
// resolved for this unit, give the same fingerprints: nothing the transform read differs.
//
// Anything outside what this reproduces exactly (a discriminator anywhere, components other than
// schemas, $defs, names outside a plain character set) makes emitTypesByUnit answer null and
// types.ts transforms the whole document. test/generator/types-units.test.ts compares both outputs.
import type { GlobalContext, OpenAPI3 } from 'openapi-typescript';
import type { TypeLiteralNode } from 'typescript';
import { openapiTs, ts } from '../ts-packages.ts';
import { TS_HEADER } from './format.ts';
import { identityMemo, onForget, session } from '../session.ts';
import { piece, Pieces, type Piece } from './pieces.ts';

const { astToString, JS_PROPERTY_INDEX_RE, resolveRef, transformComponentsObject, transformPathsObject, tsModifiers } = openapiTs;

type Doc = Record<string, unknown>;
type Kind = 'paths' | 'webhooks' | 'schemas';

/** The fields openapi-typescript 7.13.0 reads from a path item and from an operation object. */
const JSDOC_FIELDS = ['title', 'summary', 'format', 'deprecated', 'description', 'default', 'example', 'examples', 'const', 'enum', 'type', 'nullable'];
const OPERATION_FIELDS = new Set(['$ref', 'operationId', 'parameters', 'requestBody', 'responses', ...JSDOC_FIELDS]);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const PATH_ITEM_FIELDS = new Set(['$ref', 'parameters', ...METHODS, ...JSDOC_FIELDS]);
/** Component sections other than schemas would need their own units: transform the whole document. */
const OTHER_COMPONENT_SECTIONS = ['responses', 'parameters', 'requestBodies', 'headers', 'pathItems'];
const EMPTY_COMPONENT_SECTIONS = OTHER_COMPONENT_SECTIONS.map((section) => `    ${section}: never;\n`).join('');

/** Names a placeholder may stand for: printable ASCII but " and \, which TypeScript's printer never escapes. */
const PLAIN_NAME = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;
const PLACEHOLDER = /__svc(\d+)-?__/g;
const NAMED = /"\$ref":"#\/components\/schemas\/([^"/~]+)"|"operationId":"([^"]+)"/g;

const collator = new Intl.Collator('en-us', { numeric: true });

/**
 * Entries sorted as openapi-typescript's alphabetize sorts them (a stable sort by the collator). A
 * watcher's document has the same keys in the same order from one edit to the next: the order found
 * last time for the same keys (compared one by one) is used again, without 16,000 collator calls.
 */
function sortedEntries(value: unknown, kind: Kind): [string, unknown][] {
  if (!value || typeof value !== 'object') return [];
  const entries = Object.entries(value as Doc);
  const last = session.longLived ? lastOrder.get(kind) : undefined;
  if (last && last.keys.length === entries.length && last.keys.every((key, i) => key === entries[i]![0])) return last.order.map((i) => entries[i]!);
  const order = entries.map((_, i) => i).sort((a, b) => collator.compare(entries[a]![0], entries[b]![0]) || a - b);
  if (session.longLived) lastOrder.set(kind, { keys: entries.map(([key]) => key), order });
  return order.map((i) => entries[i]!);
}

/** The last order sortedEntries found for each kind of unit (a watcher's). */
const lastOrder = new Map<Kind, { keys: string[]; order: number[] }>();
onForget(() => lastOrder.clear());

/** A deep copy with every object's keys in the collator's order (openapi-typescript's sort then does one comparison per key). */
export function collated(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(collated);
  if (value === null || typeof value !== 'object') return value;
  const out: Doc = {};
  for (const key of Object.keys(value).sort(collator.compare)) out[key] = collated((value as Doc)[key]);
  return out;
}

function pick(value: unknown, fields: Set<string>): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Doc = {};
  for (const [key, v] of Object.entries(value as Doc)) if (fields.has(key)) out[key] = v;
  return out;
}

/** A path item (or webhook) with only what the transform reads. */
function readFields(item: unknown): unknown {
  const picked = pick(item, PATH_ITEM_FIELDS);
  if (!picked || typeof picked !== 'object' || Array.isArray(picked)) return picked;
  for (const method of METHODS) if (method in (picked as Doc)) (picked as Doc)[method] = pick((picked as Doc)[method], OPERATION_FIELDS);
  return picked;
}

/**
 * JSON of a value with its names as placeholders, numbered in order of first appearance after the
 * names already in `names` (which it extends). A name outside PLAIN_NAME stays as it is. Only for a
 * text that holds no placeholder's spelling (`__svc`) of its own.
 */
function normalise(json: string, names: string[]): string {
  const index = new Map(names.map((name, i) => [name, i]));
  const place = (name: string): string => {
    if (!PLAIN_NAME.test(name) || String(Number(name)) === name) return name;
    let i = index.get(name);
    if (i === undefined) {
      i = names.push(name) - 1;
      index.set(name, i);
    }
    return placeholder(name, i);
  };
  return json.replace(NAMED, (_match, ref: string | undefined, id: string | undefined) =>
    ref !== undefined ? `"$ref":"#/components/schemas/${place(ref)}"` : `"operationId":"${place(id!)}"`,
  );
}

/** A placeholder printed as the name it stands for would be: bare when an identifier, else quoted. */
const placeholder = (name: string, i: number): string => `__svc${i}${JS_PROPERTY_INDEX_RE.test(name) ? '' : '-'}__`;

const restore = (text: string, names: string[]): string => text.replace(PLACEHOLDER, (_m, i: string) => names[Number(i)]!);

/**
 * A declaration the transform adds after the file's interfaces (its "footer"), by name: the
 * `operations` interface (text null: its members are collected from every unit) or a helper type
 * such as WithRequired, printed on its own. The whole transform prints each once, in the order they
 * were first added over all units.
 */
interface Footer {
  name: string;
  text: string | null;
}

interface Entry {
  /** Each ref the transform resolved (with placeholders) and the fingerprint of what it resolved to. */
  resolved: [string, string][];
  /** The unit's members of its own interface, and of `operations`, with placeholders. */
  main: string;
  operations: string;
  /** The footers the unit's transform added, in order (texts with placeholders). */
  footers: Footer[];
}

/** The memo: unit kind and normalised content -> entries. Kept across runs of one process (svc generate --watch). */
const memo = new Map<string, Entry[]>();

/**
 * A watcher's units by object (session.ts): the unit's printed texts with its real names, reused while
 * the unit is the same object under the same key and every $ref its transform resolved points to the
 * same object as then. Document objects are never changed once built, so the same objects hold the
 * same content: this is the content memo's test by identity, without stringifying the unit.
 */
const byIdentity = identityMemo<object, { kind: Kind; name: string; memoKey: string; main: Piece; operations: Piece | null; footers: Footer[]; targets: [string, unknown][] }>();
const SCHEMA_PREFIX = '#/components/schemas/';

/** What the last emitTypesByUnit did: units in the document, and how many it transformed (the rest came from the memo). */
export const typesUnitStats = { units: 0, transformed: 0 };
const MAX_ENTRIES_PER_KEY = 4;

/** The lines between `open` and the next line that is exactly `close`. */
function between(text: string, open: string, close: string): string {
  const start = text.indexOf(`\n${open}\n`);
  if (start < 0 && !text.startsWith(`${open}\n`)) return '';
  const from = start < 0 ? open.length + 1 : start + open.length + 2;
  const end = text.indexOf(`\n${close}\n`, from - 1);
  return end < from ? '' : text.slice(from, end + 1);
}

/**
 * openapiTS()'s context (7.13.0) with our options and the defaults of every option we leave unset.
 * The discriminators are scanned by the caller (the whole-document path) or known to be none (units).
 */
export function transformContext(resolve: (ref: string) => unknown, discriminators: GlobalContext['discriminators']): GlobalContext {
  return {
    additionalProperties: false,
    alphabetize: true,
    arrayLength: false,
    // A field with a default may be omitted by the caller (validators fill no defaults): keep it optional.
    defaultNonNullable: false,
    discriminators,
    // A free-form object (an approval's input and result, an event's data) is Record<string, unknown>,
    // not Record<string, never>, so a handler returns one without a cast.
    emptyObjectsUnknown: true,
    enum: false,
    enumValues: false,
    conditionalEnums: false,
    dedupeEnums: false,
    excludeDeprecated: false,
    exportType: false,
    immutable: false,
    rootTypes: false,
    rootTypesNoSchemaPrefix: false,
    rootTypesKeepCasing: false,
    injectFooter: [],
    pathParamsAsTypes: false,
    postTransform: undefined,
    propertiesRequiredByDefault: false,
    // Read only by openapiTS's lint and bundle step, never by the transforms.
    redoc: undefined as unknown as GlobalContext['redoc'],
    silent: true,
    inject: undefined,
    transform: undefined,
    transformProperty: undefined,
    makePathsEnum: false,
    generatePathParams: false,
    readWriteMarkers: false,
    resolve: resolve as GlobalContext['resolve'],
  };
}

const ROOT: Record<Kind, string> = { paths: 'paths', webhooks: 'webhooks', schemas: 'components' };

/** Transform one unit (placeholders in, placeholders out), recording each ref it resolves. */
function transformUnit(kind: Kind, key: string, json: string, resolve: (ref: string) => unknown, fingerprint: (ref: string) => string): Entry {
  const resolved = new Map<string, string>();
  const ctx = transformContext((ref) => {
    if (!resolved.has(ref)) resolved.set(ref, fingerprint(ref));
    return resolve(ref);
  }, { objects: {}, refsHandled: [] });
  const one = { [key]: collated(JSON.parse(json)) };
  // A webhook prints as a path does (transformWebhooksObject is not exported; it differs from
  // transformPathsObject only for a $ref item, which emitTypesByUnit leaves to the whole transform).
  const literal =
    (kind === 'schemas' ? transformComponentsObject({ schemas: one } as never, ctx)[0] : transformPathsObject(one as never, ctx)) as TypeLiteralNode;
  const declaration = ts.factory.createInterfaceDeclaration(tsModifiers({ export: true }), ROOT[kind], undefined, undefined, literal.members);
  const text = astToString([declaration, ...ctx.injectFooter]);
  const own = between(text, `export interface ${ROOT[kind]} {`, '}');
  const main = kind === 'schemas' ? between(`\n${own}`, '    schemas: {', '    };') : own;
  const footers = ctx.injectFooter.map((node): Footer => {
    const name = (node as { name?: { text?: string } }).name?.text ?? astToString([node]);
    return ts.isInterfaceDeclaration(node) && name === 'operations' ? { name, text: null } : { name, text: astToString([node]) };
  });
  return { resolved: [...resolved], main, operations: between(text, 'export interface operations {', '}'), footers };
}

/**
 * generated/types.ts built unit by unit (see the head of this file), as pieces, or null when the
 * document uses something the units do not reproduce exactly: the caller then transforms the whole
 * document.
 */
export function emitTypesByUnit(doc: Doc): Pieces | null {
  const components = (doc.components ?? {}) as Doc;
  if ('$defs' in doc || OTHER_COMPONENT_SECTIONS.some((section) => section in components)) return null;

  // What each ref resolves to in this document, normalised with names of its own: two refs that
  // resolve to content differing only in names give the same fingerprint.
  const fingerprints = new Map<string, string>();
  const realFingerprint = (ref: string): string => {
    let print = fingerprints.get(ref);
    if (print === undefined) {
      const node = resolveRef(doc as unknown as OpenAPI3, ref, { silent: true });
      const json = node === undefined ? 'undefined' : JSON.stringify(node);
      print = json.includes('__svc') ? json : normalise(json, []);
      fingerprints.set(ref, print);
    }
    return print;
  };

  // What a $ref points to in this document (the object itself, compared by identity).
  const componentSchemas = (components.schemas ?? {}) as Doc;
  const targetOf = (ref: string): unknown =>
    ref.startsWith(SCHEMA_PREFIX) && !ref.includes('~') && !ref.slice(SCHEMA_PREFIX.length).includes('/')
      ? componentSchemas[ref.slice(SCHEMA_PREFIX.length)]
      : resolveRef(doc as unknown as OpenAPI3, ref, { silent: true });

  const used = new Set<string>();
  typesUnitStats.units = 0;
  typesUnitStats.transformed = 0;
  const mains: Record<Kind, Piece[]> = { paths: [], webhooks: [], schemas: [] };
  const operations: Piece[] = [];
  const footers = new Map<string, string | null>();
  const addFooters = (added: Footer[]) => {
    for (const { name, text } of added) if (!footers.has(name)) footers.set(name, text);
  };
  // One unit at a time, so that only the distinct units' texts stay in memory (the memo's keys).
  for (const [kind, entries] of [
    ['paths', sortedEntries(doc.paths, 'paths')],
    ['webhooks', sortedEntries(doc.webhooks, 'webhooks')],
    ['schemas', sortedEntries(components.schemas, 'schemas')],
  ] as [Kind, [string, unknown][]][]) {
    for (const [name, value] of entries) {
      // A watcher's unit whose object, key and every resolved target are those of its last compile.
      const same = value && typeof value === 'object' ? byIdentity.get(value) : undefined;
      if (same && same.kind === kind && same.name === name && same.targets.every(([ref, target]) => targetOf(ref) === target)) {
        typesUnitStats.units++;
        used.add(same.memoKey);
        mains[kind].push(same.main);
        if (same.operations) operations.push(same.operations);
        addFooters(same.footers);
        continue;
      }
      const raw = JSON.stringify(kind === 'schemas' ? value : readFields(value)) ?? 'null';
      // A discriminator makes the transform read other units (scanDiscriminators): not reproduced
      // here. What the units before it put in the memo is correct and stays.
      if (raw.includes('"discriminator":')) return null;
      if (kind === 'webhooks' && value && typeof value === 'object' && '$ref' in value) return null;
      typesUnitStats.units++;
      // A text that already holds a placeholder's spelling keeps every name (and is never restored).
      const plain = !raw.includes('__svc');
      // The unit's own key is a placeholder too when it is a plain name (then it is names[0]).
      const own = plain && PLAIN_NAME.test(name) && String(Number(name)) !== name;
      const names: string[] = own ? [name] : [];
      const json = plain ? normalise(raw, names) : raw;
      // A unit whose key stays as it is prints that key: it is part of what the entry is for.
      const memoKey = `${kind}\0${own ? '' : name}\0${json}`;
      used.add(memoKey);
      const real = (text: string) => (plain ? restore(text, names) : text);
      const known = memo.get(memoKey) ?? [];
      let entry = known.find((e) => e.resolved.every(([ref, print]) => realFingerprint(real(ref)) === print));
      if (!entry) {
        typesUnitStats.transformed++;
        entry = transformUnit(
          kind,
          own ? placeholder(name, 0) : name,
          json,
          (ref) => resolveRef(doc as unknown as OpenAPI3, real(ref), { silent: true }),
          (ref) => realFingerprint(real(ref)),
        );
        memo.set(memoKey, [entry, ...known].slice(0, MAX_ENTRIES_PER_KEY));
      }
      const main = piece(real(entry.main));
      const ops = entry.operations ? piece(real(entry.operations)) : null;
      const unitFooters = entry.footers.map(({ name: footer, text }) => ({ name: footer, text: text === null ? null : real(text) }));
      mains[kind].push(main);
      if (ops) operations.push(ops);
      addFooters(unitFooters);
      if (value && typeof value === 'object')
        byIdentity.set(value, { kind, name, memoKey, main, operations: ops, footers: unitFooters, targets: entry.resolved.map(([ref]) => [real(ref), targetOf(real(ref))]) });
    }
  }
  for (const key of memo.keys()) if (!used.has(key)) memo.delete(key);

  // The file as pieces: written and hashed piece by piece (pieces.ts), never one 47 MB string at 8,200
  // operations; a watcher rewrites it from its first changed piece.
  const block = (root: string, members: Piece[]) =>
    members.length ? [piece(`export interface ${root} {\n`), ...members, piece('}\n')] : [piece(`export type ${root} = Record<string, never>;\n`)];
  const schemas = mains.schemas.length ? [piece('    schemas: {\n'), ...mains.schemas, piece('    };\n')] : [piece('    schemas: never;\n')];
  // The footers in the order they were first added; `operations` where its interface was added, or,
  // with no operation, as an empty record after the rest (as transformSchema ends the file).
  const tail: Piece[] = [];
  for (const [, text] of footers) tail.push(...(text === null ? block('operations', operations) : [piece(text)]));
  if (!footers.has('operations')) tail.push(...block('operations', operations));
  const file = new Pieces([
    piece(TS_HEADER),
    ...block('paths', mains.paths),
    ...block('webhooks', mains.webhooks),
    piece('export interface components {\n'),
    ...schemas,
    piece(`${EMPTY_COMPONENT_SECTIONS}}\n`),
    piece('export type $defs = Record<string, never>;\n'),
    ...tail,
  ]);
  return file;
}
