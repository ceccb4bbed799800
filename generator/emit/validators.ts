// generated/validators/<family>.js: ajv standalone ESM validators of the family's operations' inputs
// and handler results (the output schemas, which the runtime checks before it answers), each family
// compiled by its own ajv instance (validators-compile.ts), so that an edit of one family recompiles
// that family only. generated/validators.js (+ .d.ts) re-exports them all with the operation id ->
// validator tables the runtime imports.
//
// In a watcher (svc generate --watch) an emit does work in proportion to the edit: what derives from
// one family alone is kept by its FamilyModel (FamilyPart), each family's file by what it was made of
// (FamilyFile), and what reads every family (which family owns a shared validator, the index's
// lines) is found again on each emit from those kept parts, with array lookups only.
import type { JsonSchema } from '../../runtime/contract-types.ts';
import type { FamilyModel, Model } from '../model.ts';
import { onForget, session } from '../session.ts';
import { keptJoin, readsOfModel, type SchemaReads } from './family-memo.ts';
import { TS_HEADER } from './format.ts';
import { AjvDefs, BASE, compileChunk, shapeOf, validateDefs, validateNewForms, type Unit } from './validators-compile.ts';

export function validatorName(id: string): string {
  return `validate_${id.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

export function resultValidatorName(id: string): string {
  return `validateResult_${id.replace(/[^A-Za-z0-9_]/g, '_')}`;
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
 * One validator an operation exports (its input's or its result's): a Unit (export name, ajv $id,
 * schema in ajv's form and its shape), its family, and its shape's number (State.shapeNumbers).
 */
interface Entry extends Unit {
  family: string;
  n: number;
}

/**
 * What a family contributes by itself: an entry for each operation's input and result, in order,
 * its file's name, and its lines in validators.js and validators.d.ts. It reads the family's name,
 * its operations' ids and schema names (the same while the FamilyModel is the same object) and
 * model.schemas under those names (the SchemaReads: family-memo.ts readsOfModel), so it is kept by
 * the FamilyModel while the family's SchemaReads is the one it was built with.
 */
interface FamilyPart {
  reads: SchemaReads;
  entries: Entry[];
  file: string;
  local: string;
  reexport: string;
  table: string;
  resultTable: string;
  decls: string;
}

/** A chunk of a family's code: its units, the component names its walk looked up, and its text. */
interface Chunk {
  units: Entry[];
  looked: string[];
  text: string;
}

/**
 * A family's validators file: the part it was made from, the owner of each of its entries (the first
 * entry of that shape in family order: itself, an earlier entry of the family, or another family's),
 * its chunks and its text. The text is a function of those owners (what the family compiles, imports
 * and aliases: sameOwner) and of the chunks' texts; a chunk's text of its units (entries keep their
 * content) and of what the model holds under the names it looked up (State.looked says which moved).
 */
interface FamilyFile {
  part: FamilyPart;
  owners: Entry[];
  chunks: Chunk[];
  text: string;
}

/**
 * What a watcher keeps between emits (one compile makes a new one and drops it): parts by
 * FamilyModel, files by family name (replaced on each emit, so a removed family's goes), a number
 * for each shape met, and every component name a kept chunk looked up with the object model.schemas
 * held under it at the last emit (every kept chunk was checked against, or made from, that emit's
 * model, so a name whose object is the same again leaves every chunk that looked it up valid).
 */
interface State {
  parts: WeakMap<FamilyModel, FamilyPart>;
  files: Map<string, FamilyFile>;
  shapeNumbers: Map<string, number>;
  looked: Map<string, JsonSchema | undefined>;
}

const newState = (): State => ({ parts: new WeakMap(), files: new Map(), shapeNumbers: new Map(), looked: new Map() });
let watcherState: State | null = null;
onForget(() => {
  watcherState = null;
});

function partOf(family: FamilyModel, reads: SchemaReads, defs: AjvDefs, state: State): FamilyPart {
  const known = state.parts.get(family);
  if (known && known.reads === reads) return known;
  const entries: Entry[] = [];
  const add = (exportName: string, id: string, schemaName: string) => {
    const schema = defs.get(schemaName)!;
    const shape = shapeOf(schema);
    let n = state.shapeNumbers.get(shape);
    if (n === undefined) state.shapeNumbers.set(shape, (n = state.shapeNumbers.size));
    entries.push({ exportName, id, schema, shape, family: family.name, n });
  };
  const lines = family.operations.map((op) => {
    const id = op.def.id;
    const input = validatorName(id);
    const result = resultValidatorName(id);
    add(input, `${BASE}inputs/${id}.json`, op.inputName);
    add(result, `${BASE}outputs/${id}.json`, op.outputName);
    return { id, input, result };
  });
  // One compile checks every component at once (emitValidators); a watcher checks a family's as it meets them.
  if (session.longLived) validateNewForms(reads.names.map((name, i) => [name, entries[i]!.schema]), defs);
  const exported = lines.map((l) => `${l.input}, ${l.result}`).join(', ');
  // Lines equal to those of the family's last part are that part's strings, so that the index's
  // joins (keptJoin) find their pieces the same by pointer.
  const was = state.files.get(family.name)?.part;
  const kept = (now: string, then: string | undefined) => (now === then ? then : now);
  const part: FamilyPart = {
    reads,
    entries,
    file: was?.file ?? `validators/${family.name}.js`,
    local: kept(`import { ${exported} } from './validators/${family.name}.js';`, was?.local),
    reexport: kept(`export { ${exported} } from './validators/${family.name}.js';`, was?.reexport),
    table: kept(lines.map((l) => tableLine(l.id, l.input)).join('\n'), was?.table),
    resultTable: kept(lines.map((l) => tableLine(l.id, l.result)).join('\n'), was?.resultTable),
    decls: kept(lines.map((l) => declLines(l.input, l.result)).join('\n'), was?.decls),
  };
  state.parts.set(family, part);
  return part;
}

const tableLine = (id: string, name: string) => `  ${JSON.stringify(id)}: ${name},`;
const declLines = (input: string, result: string) => `export declare const ${input}: InputValidator;\nexport declare const ${result}: InputValidator;`;

/** The names in `looked` whose object in the model is not the one recorded (the model of the last emit). */
function movedNames(looked: Map<string, JsonSchema | undefined>, schemas: Record<string, JsonSchema>): Set<string> {
  const moved = new Set<string>();
  for (const [name, raw] of looked) if (schemas[name] !== raw) moved.add(name);
  return moved;
}

function chunkStill(chunk: Chunk | undefined, units: Entry[], moved: Set<string>): chunk is Chunk {
  if (!chunk || chunk.units.length !== units.length || !chunk.units.every((u, i) => u === units[i])) return false;
  return moved.size === 0 || !chunk.looked.some((name) => moved.has(name));
}

/** The chunks of a family's own units, each in its own function scope; a last emit's chunk kept when chunkStill. */
function compileFamily(owned: Entry[], defs: AjvDefs, moved: Set<string>, last: Chunk[], state: State): Chunk[] {
  const chunks: Chunk[] = [];
  for (let start = 0; start < owned.length; start += 2 * CHUNK) {
    const units = owned.slice(start, start + 2 * CHUNK);
    const n = chunks.length;
    const previous = last[n];
    if (chunkStill(previous, units, moved)) {
      chunks.push(previous);
      continue;
    }
    const looked = new Set<string>();
    const code = compileChunk(units, defs, looked);
    for (const name of looked) state.looked.set(name, defs.schemas[name]);
    chunks.push({
      units,
      looked: [...looked],
      text: `const __chunk${n} = (() => {\nconst module = { exports: {} };\nconst exports = module.exports;\n${code}\nreturn module.exports;\n})();\n${units.map((u) => `export const ${u.exportName} = __chunk${n}.${u.exportName};`).join('\n')}`,
    });
  }
  return chunks;
}

/**
 * Whether an entry's owner `o` and its last owner `was` make the same file: the text names an owner by
 * its family and export name only (an import or an alias), and compiles the entry when it is its own
 * owner (a family's entries have distinct export names, so the same family and name is the entry).
 */
function sameOwner(o: Entry, was: Entry, e: Entry): boolean {
  return o.family === was.family && o.exportName === was.exportName && (o === e) === (was === e);
}

/**
 * A family's validators file; the last emit's when its part, its entries' owners and its chunks are.
 * Families come in name order: `owner` holds each shape's first entry in the families before this
 * one, and takes this family's entries for the shapes it meets first.
 */
function familyFile(family: string, part: FamilyPart, owner: Entry[], defs: AjvDefs, moved: Set<string>, last: FamilyFile | undefined, state: State): FamilyFile {
  const { entries } = part;
  let same = last !== undefined && last.part === part;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const o = (owner[e.n] ??= e);
    if (!same || o === last!.owners[i]) continue;
    if (sameOwner(o, last!.owners[i]!, e)) last!.owners[i] = o; // the current entry, so that the next emit compares pointers
    else same = false;
  }
  if (same && (moved.size === 0 || last!.chunks.every((c) => !c.looked.some((name) => moved.has(name))))) return last!;
  const owners = entries.map((e) => owner[e.n]!);
  const owned = entries.filter((e, i) => owners[i] === e);
  // Functions owned by an earlier family, imported once each under their owner's name.
  const imports = new Map<string, string[]>();
  for (const o of owners) {
    if (o.family === family) continue;
    const names = imports.get(o.family) ?? [];
    if (!names.includes(o.exportName)) names.push(o.exportName);
    imports.set(o.family, names);
  }
  const importLines = [...imports].map(([from, names]) => `import { ${names.join(', ')} } from './${from}.js';`);
  const aliases = entries.flatMap((e, i) => (e.exportName !== owners[i]!.exportName ? [`export const ${e.exportName} = ${owners[i]!.exportName};`] : []));
  const { imports: requireLines } = requiresToImports('');
  const chunks = compileFamily(owned, defs, moved, last?.chunks ?? [], state);
  const body = chunks.map((c) => c.text).join('\n\n');
  const text = `${TS_HEADER}${owned.length ? `${requireLines}\n` : ''}${importLines.length ? `${importLines.join('\n')}\n` : ''}${body ? `\n${body}\n` : ''}${aliases.length ? `\n${aliases.join('\n')}\n` : ''}`;
  return { part, owners, chunks, text };
}

/** Whether model.operations is the families' operations one family after another (ids start with their family's name: check.ts). */
function inFamilyOrder(model: Model, families: FamilyModel[]): boolean {
  const ops = model.operations;
  let k = 0;
  for (let f = 0; f < families.length; f++) {
    const mine = families[f]!.operations;
    for (let j = 0; j < mine.length; j++) if (ops[k++] !== mine[j]) return false;
  }
  return k === ops.length;
}

export function emitValidators(model: Model): { js: string; dts: string; families: Map<string, string> } {
  const state = session.longLived ? (watcherState ??= newState()) : newState();
  const defs = new AjvDefs(model.schemas);
  // Every component against the meta-schema: at once in one compile; in a watcher each form once, the
  // per-operation ones as partOf meets them and the others (the contract's, Problem, the outcome
  // envelopes: model.ts) here.
  if (!session.longLived) validateDefs(defs.all());
  else
    validateNewForms(
      [...model.contractSchemaNames, 'Problem', 'PlannedOutcome', 'ProposedOutcome'].filter((name) => Object.hasOwn(model.schemas, name)).map((name) => [name, defs.get(name)!]),
      defs,
    );
  const reads = readsOfModel(model);
  const families: FamilyModel[] = [];
  const parts: FamilyPart[] = [];
  for (let i = 0; i < model.families.length; i++) {
    const family = model.families[i]!;
    if (!family.operations.length) continue;
    families.push(family);
    parts.push(partOf(family, reads[i]!, defs, state));
  }

  // The validators to compile, one per distinct schema: operations whose input (or result) schemas
  // are equal (the same JSON once components are shared $defs) share one compiled function, exported
  // under each operation's name. A validator's behaviour is a function of its schema alone (its
  // errors' schemaPath is relative to the schema), so sharing changes no answer; ajv compiles each
  // shape once. A shape's owner is its first entry in family name order, so a family imports only
  // from families before it (no import cycle). Owners read every family: found again on each emit.
  const owner: Entry[] = new Array<Entry>(state.shapeNumbers.size);
  const moved = movedNames(state.looked, model.schemas);
  const files = new Map<string, FamilyFile>();
  const texts = new Map<string, string>();
  for (let i = 0; i < families.length; i++) {
    const { name } = families[i]!;
    const part = parts[i]!;
    const file = familyFile(name, part, owner, defs, moved, state.files.get(name), state);
    files.set(name, file);
    texts.set(part.file, file.text);
  }
  for (const name of moved) state.looked.set(name, model.schemas[name]);
  state.files = files;
  // Shape numbers only grow: start again when most are of schemas no longer in the model (it has two per operation at most).
  if (state.shapeNumbers.size > 4 * model.operations.length + 10_000) watcherState = null;

  // The tables list model.operations in order: each family's lines, one family after another, when
  // that is its order (always, as ids start with their family's name); line by line otherwise.
  const lines = { local: [] as string[], reexport: [] as string[], table: [] as string[], resultTable: [] as string[], decls: [] as string[] };
  for (const p of parts) {
    lines.local.push(p.local);
    lines.reexport.push(p.reexport);
    lines.table.push(p.table);
    lines.resultTable.push(p.resultTable);
    lines.decls.push(p.decls);
  }
  const ordered = inFamilyOrder(model, families);
  const ops = model.operations;
  const table = ordered ? keptJoin('validators.table', lines.table, '\n') : ops.map((op) => tableLine(op.def.id, validatorName(op.def.id))).join('\n');
  const resultTable = ordered ? keptJoin('validators.resultTable', lines.resultTable, '\n') : ops.map((op) => tableLine(op.def.id, resultValidatorName(op.def.id))).join('\n');
  const decls = ordered ? keptJoin('validators.decls', lines.decls, '\n') : ops.map((op) => declLines(validatorName(op.def.id), resultValidatorName(op.def.id))).join('\n');
  // The index files from their parts (kept joins: the same texts while every part is).
  const js = keptJoin(
    'validators.js',
    [
      `${TS_HEADER}// Every family's validators (generated/validators/<family>.js), and the tables the runtime imports.\n`,
      keptJoin('validators.local', lines.local, '\n'),
      '\n\n',
      keptJoin('validators.reexport', lines.reexport, '\n'),
      '\n\n/** Operation id -> validator of its input (the REST input object without request controls). */\nexport const validators = Object.freeze({\n',
      table,
      '\n});\n\n/** Operation id -> validator of its handler\'s result (the contract\'s output schema). */\nexport const resultValidators = Object.freeze({\n',
      resultTable,
      '\n});\n',
    ],
    '',
  );
  const dts = keptJoin(
    'validators.d.ts',
    [
      `${TS_HEADER}import type { ErrorObject } from 'ajv';

/** An ajv validate function: true when valid; otherwise its errors property lists every failure. */
export interface InputValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

`,
      decls,
      `

/** Operation id -> validator of its input. */
export declare const validators: Readonly<Record<string, InputValidator>>;

/** Operation id -> validator of its handler's result. */
export declare const resultValidators: Readonly<Record<string, InputValidator>>;
`,
    ],
    '',
  );
  return { js, dts, families: texts };
}
