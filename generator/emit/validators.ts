// generated/validators.js (+ .d.ts): ajv standalone ESM validators of every operation's input, and of
// every handler result (the operation's output schema), which the runtime checks before it answers.
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import formatsModule from 'ajv-formats';
import type { JsonSchema } from '../../runtime/contract-types.ts';
import type { Model } from '../model.ts';
import { COMPONENT_PREFIX, mapSchema, stripExtensions } from '../schema.ts';
import { TS_HEADER } from './format.ts';

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

/** One validator to compile: the first operation (and side) whose schema it is. */
interface Unit {
  exportName: string;
  id: string;
  schema: JsonSchema;
}

/**
 * The validators to compile, one per distinct schema: operations whose input (or result) schemas are
 * equal (the same JSON once components are shared $defs) share one compiled function, exported under
 * each operation's name. A validator's behaviour is a function of its schema alone (its errors'
 * schemaPath is relative to the schema), so sharing changes no answer; ajv compiles each shape once.
 */
function distinctUnits(model: Model, defs: Record<string, JsonSchema>): { units: Unit[]; exported: { name: string; unit: Unit }[] } {
  const units: Unit[] = [];
  const exported: { name: string; unit: Unit }[] = [];
  const byShape = new Map<string, Unit>();
  const add = (name: string, id: string, schema: JsonSchema) => {
    const shape = JSON.stringify(schema);
    let unit = byShape.get(shape);
    if (!unit) {
      unit = { exportName: name, id, schema };
      byShape.set(shape, unit);
      units.push(unit);
    }
    exported.push({ name, unit });
  };
  for (const op of model.operations) {
    add(validatorName(op.def.id), `${BASE}inputs/${op.def.id}.json`, defs[op.inputName]);
    add(resultValidatorName(op.def.id), `${BASE}outputs/${op.def.id}.json`, defs[op.outputName]);
  }
  return { units, exported };
}

export function emitValidators(model: Model): { js: string; dts: string } {
  const defs: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(model.schemas)) defs[name] = forAjv(schema);
  const { units, exported } = distinctUnits(model, defs);
  const chunks: string[] = [];
  const chunkOf = new Map<Unit, number>();
  for (let start = 0; start < units.length; start += 2 * CHUNK) {
    // inlineRefs: false compiles each referenced component once, as a function, instead of inlining it
    // at every use (11% less code); optimize: false skips ajv's name-counting passes (a third of
    // its time). Together they halve the generation of the 164 validators; a validator call stays
    // within a microsecond either way (measured for issue 16), against a request's hundreds.
    const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false, inlineRefs: false, code: { source: true, esm: false, lines: true, optimize: false } });
    addFormats(ajv);
    // Every component is checked against the meta-schema once, by the first instance; each instance
    // then holds only the components its validators reach, not all of them (which made the work
    // grow with operations x chunks). The validators' own schemas are those components, copied.
    // Every instance still compiles the meta-schema first: its names come first in the chunk's code.
    ajv.validateSchema(start === 0 ? { $id: DEFS_ID, $defs: defs } : {}, true);
    const slice = units.slice(start, start + 2 * CHUNK);
    const reached = referencedDefs(slice.map((u) => u.schema), defs);
    const chunkDefs: Record<string, JsonSchema> = {};
    for (const name of Object.keys(defs)) if (reached.has(name)) chunkDefs[name] = defs[name];
    ajv.addSchema({ $id: DEFS_ID, $defs: chunkDefs }, undefined, undefined, false);
    const exportsMap: Record<string, string> = {};
    for (const unit of slice) {
      ajv.addSchema({ ...unit.schema, $id: unit.id }, undefined, undefined, false);
      exportsMap[unit.exportName] = unit.id;
      chunkOf.set(unit, chunks.length);
    }
    // Each chunk is CommonJS-shaped code in its own function scope, so ajv's names cannot collide.
    chunks.push(`const __chunk${chunks.length} = (() => {\nconst module = { exports: {} };\nconst exports = module.exports;\n${standaloneCode(ajv, exportsMap)}\nreturn module.exports;\n})();`);
  }
  const exportLines = exported.map(({ name, unit }) =>
    name === unit.exportName ? `export const ${name} = __chunk${chunkOf.get(unit)}.${name};` : `export const ${name} = ${unit.exportName};`,
  );
  const { imports, code } = requiresToImports(chunks.join('\n\n'));
  const table = model.operations.map((op) => `  ${JSON.stringify(op.def.id)}: ${validatorName(op.def.id)},`).join('\n');
  const resultTable = model.operations.map((op) => `  ${JSON.stringify(op.def.id)}: ${resultValidatorName(op.def.id)},`).join('\n');
  const js = `${TS_HEADER}${imports}

${code}

${exportLines.join('\n')}

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
  return { js, dts };
}
