// generated/validators/<family>.js: ajv standalone ESM validators of the family's operations' inputs
// and handler results (the output schemas, which the runtime checks before it answers), each family
// compiled by its own ajv instance, so that an edit of one family recompiles that family only (the
// code of a family is memoised by what it compiles: validatorMemo). generated/validators.js (+ .d.ts)
// re-exports them all with the operation id -> validator tables the runtime imports.
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import formatsModule from 'ajv-formats';
import type { JsonSchema } from '../../runtime/contract-types.ts';
import type { FamilyModel, Model, ModelOperation } from '../model.ts';
import { COMPONENT_PREFIX, mapSchema, stripExtensions } from '../schema.ts';
import { identityMemo, onForget, session } from '../session.ts';
import { TS_HEADER } from './format.ts';
import { readPiece, writePiece } from '../cache.ts';

// Both are CommonJS modules whose module.exports is the function (NodeNext types see only .default).
const standaloneCode = ((standaloneModule as unknown as { default?: unknown }).default ?? standaloneModule) as unknown as typeof standaloneModule.default;
const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as unknown as typeof formatsModule.default;

const BASE = 'https://svc.invalid/';
const DEFS_ID = `${BASE}schemas.json`;

export function validatorName(id: string): string {
  return `validate_${id.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

export function resultValidatorName(id: string): string {
  return `validateResult_${id.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/** #/components/schemas/X -> one shared document's $defs, so each component compiles once. */
function forAjv(schema: JsonSchema): JsonSchema {
  return mapSchema(stripExtensions(schema), (node) =>
    typeof node.$ref === 'string' && node.$ref.startsWith(COMPONENT_PREFIX)
      ? { ...node, $ref: `${DEFS_ID}#/$defs/${node.$ref.slice(COMPONENT_PREFIX.length)}` }
      : node,
  ) as JsonSchema;
}

/**
 * ajv's standalone code calls require(...) for its runtime helpers and formats. Those are CommonJS
 * modules; an ESM default import of them differs between Node and bundler-style loaders (vitest),
 * so the generated module gets a real `require` from createRequire and the code runs unchanged.
 */
function requiresToImports(code: string): { imports: string; code: string } {
  return { imports: 'import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);', code };
}

/** Operations per ajv instance: ajv's standalone code generation overflows the stack on thousands. */
const CHUNK = 200;

/**
 * A model schema in ajv's form, and that form's JSON text (the shape by which operations share a
 * validator), by identity: a watcher's model keeps the contract's schemas and an unchanged family's
 * generated schemas as the same objects (model.ts), and each value is a function of the content of
 * the object it is keyed on alone (no emitter changes a schema). One compile remembers nothing.
 */
const ajvForms = identityMemo<JsonSchema, JsonSchema>();
const shapes = identityMemo<JsonSchema, string>();

function ajvForm(schema: JsonSchema): JsonSchema {
  return ajvForms.get(schema) ?? ajvForms.set(schema, forAjv(schema));
}

function shapeOf(ajvSchema: JsonSchema): string {
  return shapes.get(ajvSchema) ?? shapes.set(ajvSchema, JSON.stringify(ajvSchema));
}

/**
 * Component names a schema refers to (forAjv form), with the ones those refer to, transitively.
 * `looked`, when given, receives every name the walk looked up in defs, found there or not: the walk
 * is a function of the roots and of what defs holds under those names.
 */
function referencedDefs(roots: JsonSchema[], defs: Record<string, JsonSchema>, looked?: Set<string>): Set<string> {
  const prefix = `${DEFS_ID}#/$defs/`;
  const found = new Set<string>();
  const stack: unknown[] = [...roots];
  while (stack.length) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string' && value.startsWith(prefix)) {
          const name = value.slice(prefix.length);
          looked?.add(name);
          if (!found.has(name) && name in defs) {
            found.add(name);
            stack.push(defs[name]);
          }
        } else if (value && typeof value === 'object') stack.push(value);
      }
    }
  }
  return found;
}

/** One validator to compile: the first operation (and side) whose schema it is, in its owner family. */
interface Unit {
  exportName: string;
  id: string;
  schema: JsonSchema;
  shape: string;
  family: string;
}

/** A family's part of the validators: the units it owns (compiles) and the name of every validator it exports. */
interface FamilyUnits {
  owned: Unit[];
  exported: { name: string; unit: Unit }[];
}

/**
 * The validators to compile, one per distinct schema: operations whose input (or result) schemas are
 * equal (the same JSON once components are shared $defs) share one compiled function, exported under
 * each operation's name. A validator's behaviour is a function of its schema alone (its errors'
 * schemaPath is relative to the schema), so sharing changes no answer; ajv compiles each shape once.
 * The family that owns a shared function is the first in name order that has the schema, so a family
 * imports only from families before it (no import cycle). Which family owns a shape depends on every
 * family: this runs whole on each compile (cheap once the shapes are memoised), by family in name order.
 */
function distinctUnits(model: Model, defs: Record<string, JsonSchema>): Map<string, FamilyUnits> {
  const families = new Map<string, FamilyUnits>();
  const byShape = new Map<string, Unit>();
  for (const family of model.families) {
    if (!family.operations.length) continue;
    const mine: FamilyUnits = { owned: [], exported: [] };
    families.set(family.name, mine);
    const add = (name: string, id: string, schema: JsonSchema) => {
      const shape = shapeOf(schema);
      let unit = byShape.get(shape);
      if (!unit) {
        unit = { exportName: name, id, schema, shape, family: family.name };
        byShape.set(shape, unit);
        mine.owned.push(unit);
      }
      mine.exported.push({ name, unit });
    };
    for (const op of family.operations) {
      add(validatorName(op.def.id), `${BASE}inputs/${op.def.id}.json`, defs[op.inputName]);
      add(resultValidatorName(op.def.id), `${BASE}outputs/${op.def.id}.json`, defs[op.outputName]);
    }
  }
  return families;
}

/**
 * Compiled code of one family's own validators, by what it was compiled from (the units and the
 * components they reach): a later emit in the same process (svc generate --watch), or in a later
 * process through the cache (cache.ts readPiece, keyed with the compiler's fingerprint too),
 * recompiles only the families whose schemas changed. The code is a function of that input alone (a
 * fresh ajv instance per family), so neither memo changes a byte.
 */
const validatorMemo = new Map<string, string>();
const MEMO_LIMIT = 20_000;

function newAjv() {
  // inlineRefs: false compiles each referenced component once, as a function, instead of inlining it
  // at every use (11% less code); optimize: false skips ajv's name-counting passes (a third of
  // its time). Together they halve the generation of the 164 validators; a validator call stays
  // within a microsecond either way (measured for issue 16), against a request's hundreds.
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false, inlineRefs: false, code: { source: true, esm: false, lines: true, optimize: false } });
  addFormats(ajv);
  return ajv;
}

/**
 * One chunk of a family's code as a watcher last compiled it: its units, every component name the
 * walk over them looked up with what defs held under it (undefined: nothing), and the chunk's text.
 */
interface ChunkRecord {
  units: Unit[];
  looked: [string, JsonSchema | undefined][];
  text: string;
}

/** A watcher's last validators file of a family: its chunks, body, the text around the body, and the file. */
interface FamilyRecord {
  chunks: ChunkRecord[];
  body: string;
  head: string;
  tail: string;
  text: string;
}

/**
 * A watcher's FamilyRecords by family name, replaced by each emit's (so a removed family's goes).
 * A chunk's text is a function of its units' export names, ids and schemas (the ajv form's identity
 * fixes its content), the components the walk reached (ordered as defs orders names: by name) and
 * the chunk's index. A chunk whose units are those of the record (same names, ids, schema objects)
 * and whose looked-up names still hold the same objects (or still nothing) reaches the same
 * components, so its text is the record's (sameChunk). What the family imports from other families
 * and exports under other names (head, tail) is rebuilt on every emit from distinctUnits.
 */
let lastFamilies = new Map<string, FamilyRecord>();
onForget(() => {
  lastFamilies = new Map();
});

function sameChunk(record: ChunkRecord | undefined, slice: Unit[], defs: Record<string, JsonSchema>): record is ChunkRecord {
  if (!record || record.units.length !== slice.length) return false;
  for (let i = 0; i < slice.length; i++) {
    const a = record.units[i]!;
    const b = slice[i]!;
    if (a.exportName !== b.exportName || a.id !== b.id || a.schema !== b.schema) return false;
  }
  return record.looked.every(([name, def]) => defs[name] === def);
}

/**
 * The chunks of code of one family's own units (CommonJS-shaped, each in its own function scope).
 * `order` gives each component's position in defs (chunks list their components in that order);
 * `last` is the family's record from a watcher's previous emit, whose chunks are kept when sameChunk.
 */
function compileFamily(owned: Unit[], defs: Record<string, JsonSchema>, order: () => Map<string, number>, last: FamilyRecord | undefined): { chunks: ChunkRecord[]; body: string } {
  const chunks: ChunkRecord[] = [];
  let kept = 0;
  for (let start = 0; start < owned.length; start += 2 * CHUNK) {
    const slice = owned.slice(start, start + 2 * CHUNK);
    const n = chunks.length;
    const previous = last?.chunks[n];
    if (sameChunk(previous, slice, defs)) {
      chunks.push(previous);
      kept++;
      continue;
    }
    const looked = session.longLived ? new Set<string>() : undefined;
    const reached = referencedDefs(slice.map((u) => u.schema), defs, looked);
    const position = order();
    const chunkDefs: Record<string, JsonSchema> = {};
    for (const name of [...reached].filter((r) => position.has(r)).sort((a, b) => position.get(a)! - position.get(b)!)) chunkDefs[name] = defs[name]!;
    const memoKey = JSON.stringify([slice.map((u) => [u.exportName, u.id, u.shape]), chunkDefs]);
    let code = validatorMemo.get(memoKey) ?? readPiece('validators', memoKey) ?? undefined;
    if (code === undefined) {
      // Each instance holds only the components its validators reach; the validators' own schemas
      // are those components, copied.
      const ajv = newAjv();
      ajv.addSchema({ $id: DEFS_ID, $defs: chunkDefs }, undefined, undefined, false);
      const exportsMap: Record<string, string> = {};
      for (const unit of slice) {
        ajv.addSchema({ ...unit.schema, $id: unit.id }, undefined, undefined, false);
        exportsMap[unit.exportName] = unit.id;
      }
      code = standaloneCode(ajv, exportsMap);
      writePiece('validators', memoKey, code);
    }
    if (validatorMemo.size >= MEMO_LIMIT) validatorMemo.clear();
    validatorMemo.set(memoKey, code);
    chunks.push({
      units: slice,
      looked: looked ? [...looked].map((name): [string, JsonSchema | undefined] => [name, defs[name]]) : [],
      text: `const __chunk${n} = (() => {\nconst module = { exports: {} };\nconst exports = module.exports;\n${code}\nreturn module.exports;\n})();\n${slice.map((u) => `export const ${u.exportName} = __chunk${n}.${u.exportName};`).join('\n')}`,
    });
  }
  const body = last && kept === chunks.length && kept === last.chunks.length ? last.body : chunks.map((c) => c.text).join('\n\n');
  return { chunks, body };
}

/** Every component checked against the meta-schema once (memoised by the components' text). */
const validatedDefs = new Set<string>();
function validateDefs(defs: Record<string, JsonSchema>): void {
  if (session.longLived) return validateNewDefs(defs);
  const text = JSON.stringify(defs);
  if (validatedDefs.has(text)) return;
  newAjv().validateSchema({ $id: DEFS_ID, $defs: defs }, true);
  if (validatedDefs.size >= 64) validatedDefs.clear();
  validatedDefs.add(text);
}

/**
 * A watcher checks the components it has not checked yet, by identity (checkedDefs): the meta-schema
 * checks each $defs entry by itself, so a component that passed passes again. When the new ones
 * fail, every component is checked together, so the error is the one a fresh compile throws.
 */
const checkedDefs = identityMemo<JsonSchema, true>();
let metaAjv: ReturnType<typeof newAjv> | undefined;
function validateNewDefs(defs: Record<string, JsonSchema>): void {
  const unchecked: Record<string, JsonSchema> = {};
  let count = 0;
  for (const [name, def] of Object.entries(defs))
    if (!checkedDefs.get(def)) {
      unchecked[name] = def;
      count++;
    }
  if (!count) return;
  try {
    (metaAjv ??= newAjv()).validateSchema({ $id: DEFS_ID, $defs: unchecked }, true);
  } catch {
    newAjv().validateSchema({ $id: DEFS_ID, $defs: defs }, true);
  }
  for (const def of Object.values(unchecked)) checkedDefs.set(def, true);
}

/** An operation's lines in validators.js and .d.ts: functions of its id alone, by the operation's identity. */
interface OperationLines {
  /** `validate_x, validateResult_x` */
  names: string;
  table: string;
  resultTable: string;
  decls: string;
}
const operationLines = identityMemo<ModelOperation, OperationLines>();

function linesOf(op: ModelOperation): OperationLines {
  const known = operationLines.get(op);
  if (known) return known;
  const id = op.def.id;
  const input = validatorName(id);
  const result = resultValidatorName(id);
  return operationLines.set(op, {
    names: `${input}, ${result}`,
    table: `  ${JSON.stringify(id)}: ${input},`,
    resultTable: `  ${JSON.stringify(id)}: ${result},`,
    decls: `export declare const ${input}: InputValidator;\nexport declare const ${result}: InputValidator;`,
  });
}

/**
 * A family's import and re-export lines in validators.js: functions of its name and its operations'
 * ids, by the FamilyModel's identity (model.ts keeps it while its operations are the same objects).
 */
const familyLines = identityMemo<FamilyModel, { local: string; reexport: string }>();

function familyLinesOf(family: FamilyModel): { local: string; reexport: string } {
  const known = familyLines.get(family);
  if (known) return known;
  const names = family.operations.map((op) => linesOf(op).names).join(', ');
  return familyLines.set(family, {
    local: `import { ${names} } from './validators/${family.name}.js';`,
    reexport: `export { ${names} } from './validators/${family.name}.js';`,
  });
}

export function emitValidators(model: Model): { js: string; dts: string; families: Map<string, string> } {
  const defs: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(model.schemas)) defs[name] = ajvForm(schema);
  validateDefs(defs);
  const units = distinctUnits(model, defs);
  let position: Map<string, number> | undefined;
  const order = () => (position ??= new Map(Object.keys(defs).map((name, i) => [name, i])));
  const previous = session.longLived ? lastFamilies : new Map<string, FamilyRecord>();
  const records = new Map<string, FamilyRecord>();
  const families = new Map<string, string>();
  for (const [family, { owned, exported }] of units) {
    // Functions owned by an earlier family, imported once each under their owner's name.
    const imports = new Map<string, string[]>();
    for (const { unit } of exported) {
      if (unit.family === family) continue;
      const names = imports.get(unit.family) ?? [];
      if (!names.includes(unit.exportName)) names.push(unit.exportName);
      imports.set(unit.family, names);
    }
    const importLines = [...imports].map(([owner, names]) => `import { ${names.join(', ')} } from './${owner}.js';`);
    const aliases = exported.filter(({ name, unit }) => name !== unit.exportName).map(({ name, unit }) => `export const ${name} = ${unit.exportName};`);
    const { imports: requireLines } = requiresToImports('');
    const last = previous.get(family);
    const { chunks, body } = owned.length ? compileFamily(owned, defs, order, last) : { chunks: [], body: '' };
    const head = `${owned.length ? `${requireLines}\n` : ''}${importLines.length ? `${importLines.join('\n')}\n` : ''}`;
    const tail = aliases.length ? `\n${aliases.join('\n')}\n` : '';
    const text = last && last.body === body && last.head === head && last.tail === tail ? last.text : `${TS_HEADER}${head}${body ? `\n${body}\n` : ''}${tail}`;
    if (session.longLived) records.set(family, { chunks, body, head, tail, text });
    families.set(`validators/${family}.js`, text);
  }
  if (session.longLived) lastFamilies = records;
  const named = model.families.filter((f) => f.operations.length).map(familyLinesOf);
  const lines = model.operations.map(linesOf);
  const js = `${TS_HEADER}// Every family's validators (generated/validators/<family>.js), and the tables the runtime imports.
${named.map((f) => f.local).join('\n')}

${named.map((f) => f.reexport).join('\n')}

/** Operation id -> validator of its input (the REST input object without request controls). */
export const validators = Object.freeze({
${lines.map((l) => l.table).join('\n')}
});

/** Operation id -> validator of its handler's result (the contract's output schema). */
export const resultValidators = Object.freeze({
${lines.map((l) => l.resultTable).join('\n')}
});
`;
  const dts = `${TS_HEADER}import type { ErrorObject } from 'ajv';

/** An ajv validate function: true when valid; otherwise its errors property lists every failure. */
export interface InputValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

${lines.map((l) => l.decls).join('\n')}

/** Operation id -> validator of its input. */
export declare const validators: Readonly<Record<string, InputValidator>>;

/** Operation id -> validator of its handler's result. */
export declare const resultValidators: Readonly<Record<string, InputValidator>>;
`;
  return { js, dts, families };
}
