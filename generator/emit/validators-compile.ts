// The ajv side of the validators (validators.ts): components in ajv's form, a chunk of validators
// compiled to standalone code (memoised by what it compiles, in process and across processes through
// the cache), and the meta-schema check of the components.
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import formatsModule from 'ajv-formats';
import type { JsonSchema } from '../../runtime/contract-types.ts';
import { COMPONENT_PREFIX, mapSchema, stripExtensions } from '../schema.ts';
import { identityMemo } from '../session.ts';
import { readPiece, writePiece } from '../cache.ts';

// Both are CommonJS modules whose module.exports is the function (NodeNext types see only .default).
const standaloneCode = ((standaloneModule as unknown as { default?: unknown }).default ?? standaloneModule) as unknown as typeof standaloneModule.default;
const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as unknown as typeof formatsModule.default;

export const BASE = 'https://svc.invalid/';
const DEFS_ID = `${BASE}schemas.json`;
const DEFS_PREFIX = `${DEFS_ID}#/$defs/`;

/** #/components/schemas/X -> one shared document's $defs, so each component compiles once. */
function forAjv(schema: JsonSchema): JsonSchema {
  return mapSchema(stripExtensions(schema), (node) =>
    typeof node.$ref === 'string' && node.$ref.startsWith(COMPONENT_PREFIX)
      ? { ...node, $ref: `${DEFS_PREFIX}${node.$ref.slice(COMPONENT_PREFIX.length)}` }
      : node,
  ) as JsonSchema;
}

/**
 * A model schema's ajv form by the schema's identity (a watcher's model keeps the contract's schemas
 * and an unchanged family's as the same objects: model.ts), and a form's JSON text (the shape by
 * which operations share a validator) by the form's identity. Each is a function of the content of
 * the object it is keyed on alone (no emitter changes a schema).
 */
const ajvForms = identityMemo<JsonSchema, JsonSchema>();
const shapes = identityMemo<JsonSchema, string>();

export function shapeOf(form: JsonSchema): string {
  return shapes.get(form) ?? shapes.set(form, JSON.stringify(form));
}

/** A model's components in ajv's form, each converted once (by name, as the model's record holds them). */
export class AjvDefs {
  private readonly forms = new Map<string, JsonSchema>();
  constructor(readonly schemas: Record<string, JsonSchema>) {}

  /** `name in defs` of the record of every form. */
  has(name: string): boolean {
    return name in this.schemas;
  }

  /** The form of the model's schema `name`; what the record inherits (a name like `constructor`) as it is. */
  get(name: string): JsonSchema | undefined {
    if (!Object.hasOwn(this.schemas, name)) return this.schemas[name];
    let form = this.forms.get(name);
    if (!form) {
      const raw = this.schemas[name]!;
      form = ajvForms.get(raw) ?? ajvForms.set(raw, forAjv(raw));
      this.forms.set(name, form);
    }
    return form;
  }

  /** Every form, in the model's order. */
  all(): Record<string, JsonSchema> {
    const defs: Record<string, JsonSchema> = {};
    for (const name of Object.keys(this.schemas)) defs[name] = this.get(name)!;
    return defs;
  }
}

/**
 * Component names the schemas refer to, with the ones those refer to, transitively. `looked`
 * receives every name the walk looked up, found or not: the walk is a function of the roots and of
 * what the model holds under those names.
 */
export function referencedDefs(roots: JsonSchema[], defs: AjvDefs, looked: Set<string>): Set<string> {
  const found = new Set<string>();
  const stack: unknown[] = [...roots];
  while (stack.length) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string' && value.startsWith(DEFS_PREFIX)) {
          const name = value.slice(DEFS_PREFIX.length);
          looked.add(name);
          if (!found.has(name) && defs.has(name)) {
            found.add(name);
            stack.push(defs.get(name));
          }
        } else if (value && typeof value === 'object') stack.push(value);
      }
    }
  }
  return found;
}

/** One validator to compile: the first operation (and side) whose schema it is, in its owner family. */
export interface Unit {
  exportName: string;
  id: string;
  schema: JsonSchema;
  shape: string;
}

/**
 * Compiled code of a chunk of validators, by what it was compiled from (the units and the components
 * they reach): a later emit in the same process (svc generate --watch), or in a later process through
 * the cache (cache.ts readPiece, keyed with the compiler's fingerprint too), recompiles only the
 * chunks whose schemas changed. The code is a function of that input alone (a fresh ajv instance per
 * chunk), so neither memo changes a byte.
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

/** The standalone code (CommonJS-shaped) of `units`, with the components they reach; `looked` as referencedDefs fills it. */
export function compileChunk(units: Unit[], defs: AjvDefs, looked: Set<string>): string {
  const reached = referencedDefs(
    units.map((u) => u.schema),
    defs,
    looked,
  );
  // The components in the model's order: its record's keys were inserted sorted, so an object given
  // the reached names sorted orders them as the record does (integer-like names first, as any object).
  const chunkDefs: Record<string, JsonSchema> = {};
  for (const name of [...reached].sort()) if (Object.hasOwn(defs.schemas, name)) chunkDefs[name] = defs.get(name)!;
  const memoKey = JSON.stringify([units.map((u) => [u.exportName, u.id, u.shape]), chunkDefs]);
  let code = validatorMemo.get(memoKey) ?? readPiece('validators', memoKey) ?? undefined;
  if (code === undefined) {
    // Each instance holds only the components its validators reach; the validators' own schemas
    // are those components, copied.
    const ajv = newAjv();
    ajv.addSchema({ $id: DEFS_ID, $defs: chunkDefs }, undefined, undefined, false);
    const exportsMap: Record<string, string> = {};
    for (const unit of units) {
      ajv.addSchema({ ...unit.schema, $id: unit.id }, undefined, undefined, false);
      exportsMap[unit.exportName] = unit.id;
    }
    code = standaloneCode(ajv, exportsMap);
    writePiece('validators', memoKey, code);
  }
  if (validatorMemo.size >= MEMO_LIMIT) validatorMemo.clear();
  validatorMemo.set(memoKey, code);
  return code;
}

/** Every component checked against the meta-schema once (memoised by the components' text). */
const validatedDefs = new Set<string>();
export function validateDefs(defs: Record<string, JsonSchema>): void {
  const text = JSON.stringify(defs);
  if (validatedDefs.has(text)) return;
  newAjv().validateSchema({ $id: DEFS_ID, $defs: defs }, true);
  if (validatedDefs.size >= 64) validatedDefs.clear();
  validatedDefs.add(text);
}

/**
 * A watcher checks each form once, by identity, when it first meets it: the meta-schema checks each
 * $defs entry by itself, so a form that passed passes again. When some fail, every component is
 * checked together (validateDefs of all), so the error is the one a fresh compile throws.
 */
const checkedForms = identityMemo<JsonSchema, true>();
let metaAjv: ReturnType<typeof newAjv> | undefined;
export function validateNewForms(forms: [string, JsonSchema][], defs: AjvDefs): void {
  const unchecked = forms.filter(([, form]) => !checkedForms.get(form));
  if (!unchecked.length) return;
  try {
    (metaAjv ??= newAjv()).validateSchema({ $id: DEFS_ID, $defs: Object.fromEntries(unchecked) }, true);
  } catch {
    newAjv().validateSchema({ $id: DEFS_ID, $defs: defs.all() }, true);
  }
  for (const [, form] of unchecked) checkedForms.set(form, true);
}
