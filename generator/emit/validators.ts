// generated/validators/<family>.js: ajv standalone ESM validators of the family's operations' inputs
// and handler results (the output schemas, which the runtime checks before it answers), each family
// compiled by its own ajv instance, so that an edit of one family recompiles that family only (the
// code of a family is memoised by what it compiles: validatorMemo). generated/validators.js (+ .d.ts)
// re-exports them all with the operation id -> validator tables the runtime imports.
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import formatsModule from 'ajv-formats';
import type { JsonSchema } from '../../runtime/contract-types.ts';
import type { Model } from '../model.ts';
import { COMPONENT_PREFIX, mapSchema, stripExtensions } from '../schema.ts';
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

/** Component names a schema refers to (forAjv form), with the ones those refer to, transitively. */
function referencedDefs(roots: JsonSchema[], defs: Record<string, JsonSchema>): Set<string> {
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

/**
 * The validators to compile, one per distinct schema: operations whose input (or result) schemas are
 * equal (the same JSON once components are shared $defs) share one compiled function, exported under
 * each operation's name. A validator's behaviour is a function of its schema alone (its errors'
 * schemaPath is relative to the schema), so sharing changes no answer; ajv compiles each shape once.
 * The family that owns a shared function is the first in name order that has the schema, so a family
 * imports only from families before it (no import cycle).
 */
function distinctUnits(model: Model, defs: Record<string, JsonSchema>): { units: Unit[]; exported: { name: string; family: string; unit: Unit }[] } {
  const units: Unit[] = [];
  const exported: { name: string; family: string; unit: Unit }[] = [];
  const byShape = new Map<string, Unit>();
  const ops = [...model.operations].sort((a, b) => (a.def.family < b.def.family ? -1 : a.def.family > b.def.family ? 1 : 0));
  const add = (family: string, name: string, id: string, schema: JsonSchema) => {
    const shape = JSON.stringify(schema);
    let unit = byShape.get(shape);
    if (!unit) {
      unit = { exportName: name, id, schema, shape, family };
      byShape.set(shape, unit);
      units.push(unit);
    }
    exported.push({ name, family, unit });
  };
  for (const op of ops) {
    add(op.def.family, validatorName(op.def.id), `${BASE}inputs/${op.def.id}.json`, defs[op.inputName]);
    add(op.def.family, resultValidatorName(op.def.id), `${BASE}outputs/${op.def.id}.json`, defs[op.outputName]);
  }
  return { units, exported };
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

/** The chunks of code of one family's own units (CommonJS-shaped, each in its own function scope). */
function compileFamily(owned: Unit[], defs: Record<string, JsonSchema>): string {
  const chunks: string[] = [];
  for (let start = 0; start < owned.length; start += 2 * CHUNK) {
    const slice = owned.slice(start, start + 2 * CHUNK);
    const reached = referencedDefs(slice.map((u) => u.schema), defs);
    const chunkDefs: Record<string, JsonSchema> = {};
    for (const name of Object.keys(defs)) if (reached.has(name)) chunkDefs[name] = defs[name];
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
    const n = chunks.length;
    chunks.push(`const __chunk${n} = (() => {\nconst module = { exports: {} };\nconst exports = module.exports;\n${code}\nreturn module.exports;\n})();\n${slice.map((u) => `export const ${u.exportName} = __chunk${n}.${u.exportName};`).join('\n')}`);
  }
  return chunks.join('\n\n');
}

/** Every component checked against the meta-schema once (memoised by the components' text). */
const validatedDefs = new Set<string>();
function validateDefs(defs: Record<string, JsonSchema>): void {
  const text = JSON.stringify(defs);
  if (validatedDefs.has(text)) return;
  newAjv().validateSchema({ $id: DEFS_ID, $defs: defs }, true);
  if (validatedDefs.size >= 64) validatedDefs.clear();
  validatedDefs.add(text);
}

export function emitValidators(model: Model): { js: string; dts: string; families: Map<string, string> } {
  const defs: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(model.schemas)) defs[name] = forAjv(schema);
  validateDefs(defs);
  const { units, exported } = distinctUnits(model, defs);
  const familyNames = [...new Set(model.operations.map((op) => op.def.family))].sort();
  const families = new Map<string, string>();
  for (const family of familyNames) {
    const owned = units.filter((u) => u.family === family);
    const mine = exported.filter((e) => e.family === family);
    // Functions owned by an earlier family, imported once each under their owner's name.
    const imports = new Map<string, string[]>();
    for (const { unit } of mine) {
      if (unit.family === family) continue;
      const names = imports.get(unit.family) ?? [];
      if (!names.includes(unit.exportName)) names.push(unit.exportName);
      imports.set(unit.family, names);
    }
    const importLines = [...imports].map(([owner, names]) => `import { ${names.join(', ')} } from './${owner}.js';`);
    const aliases = mine.filter(({ name, unit }) => name !== unit.exportName).map(({ name, unit }) => `export const ${name} = ${unit.exportName};`);
    const { imports: requireLines } = requiresToImports('');
    const body = owned.length ? compileFamily(owned, defs) : '';
    families.set(
      `validators/${family}.js`,
      `${TS_HEADER}${owned.length ? `${requireLines}\n` : ''}${importLines.length ? `${importLines.join('\n')}\n` : ''}${body ? `\n${body}\n` : ''}${aliases.length ? `\n${aliases.join('\n')}\n` : ''}`,
    );
  }
  const byFamily = new Map<string, string[]>();
  for (const op of model.operations) byFamily.set(op.def.family, [...(byFamily.get(op.def.family) ?? []), validatorName(op.def.id), resultValidatorName(op.def.id)]);
  const reexports = familyNames.map((family) => `export { ${byFamily.get(family)!.join(', ')} } from './validators/${family}.js';`);
  const localImports = familyNames.map((family) => `import { ${byFamily.get(family)!.join(', ')} } from './validators/${family}.js';`);
  const table = model.operations.map((op) => `  ${JSON.stringify(op.def.id)}: ${validatorName(op.def.id)},`).join('\n');
  const resultTable = model.operations.map((op) => `  ${JSON.stringify(op.def.id)}: ${resultValidatorName(op.def.id)},`).join('\n');
  const js = `${TS_HEADER}// Every family's validators (generated/validators/<family>.js), and the tables the runtime imports.
${localImports.join('\n')}

${reexports.join('\n')}

/** Operation id -> validator of its input (the REST input object without request controls). */
export const validators = Object.freeze({
${table}
});

/** Operation id -> validator of its handler's result (the contract's output schema). */
export const resultValidators = Object.freeze({
${resultTable}
});
`;
  const decls = model.operations
    .flatMap((op) => [`export declare const ${validatorName(op.def.id)}: InputValidator;`, `export declare const ${resultValidatorName(op.def.id)}: InputValidator;`])
    .join('\n');
  const dts = `${TS_HEADER}import type { ErrorObject } from 'ajv';

/** An ajv validate function: true when valid; otherwise its errors property lists every failure. */
export interface InputValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

${decls}

/** Operation id -> validator of its input. */
export declare const validators: Readonly<Record<string, InputValidator>>;

/** Operation id -> validator of its handler's result. */
export declare const resultValidators: Readonly<Record<string, InputValidator>>;
`;
  return { js, dts, families };
}
