// The last resort behind the contract checks: when ajv refuses a schema while the validators are
// emitted, find the contract node it came from, so that the author still gets file:line:col and a
// rule instead of ajv's text about a generated name (TasksCountOutput) that is nowhere in the YAML.
// The checks (shapes.ts, check.ts) are meant to make this unreachable; a test keeps it working.
import { createRequire } from 'node:module';
import type { JsonSchema } from '../runtime/contract-types.ts';
import type { LoadedContract } from './load.ts';
import type { Model } from './model.ts';
import { asArray, asObj, isObj } from './raw.ts';
import { COMPONENT_PREFIX, mapSchema, stripExtensions } from './schema.ts';
import { ContractError, diagnostic, type Diagnostic, type JsonPath, type SourceFile } from './source.ts';

const require = createRequire(import.meta.url);
const DEFS_ID = 'https://svc.invalid/located.json';

interface Home {
  source: SourceFile;
  at: JsonPath;
  label: string;
  /** Leading pointer segments of the component that the source node does not have (a page's envelope). */
  envelope: string[];
}

/** Where a component schema was written: a schema of schemas/, or an operation's input/output/result/page. */
function homeOf(name: string, contract: LoadedContract, model: Model): Home | null {
  for (const source of contract.schemaFiles) if (isObj(source.data) && name in source.data) return { source, at: [name], label: `schema ${name}`, envelope: [] };
  const op = model.operations.find((o) => o.inputName === name || o.outputName === name);
  if (!op) return null;
  for (const source of contract.familyFiles) {
    const index = asArray(asObj(source.data).operations).findIndex((raw) => asObj(raw).id === op.def.id);
    if (index < 0) continue;
    if (op.inputName === name) return { source, at: ['operations', index, 'input'], label: `${op.def.id}'s input`, envelope: [] };
    const part = op.def.kind === 'command' ? 'result' : op.def.paged ? 'page' : 'output';
    return { source, at: ['operations', index, part], label: `${op.def.id}'s ${part}`, envelope: part === 'page' ? ['properties', 'items', 'items'] : [] };
  }
  return null;
}

function forAjv(schema: JsonSchema): JsonSchema {
  return mapSchema(stripExtensions(schema), (node) =>
    typeof node.$ref === 'string' && node.$ref.startsWith(COMPONENT_PREFIX) ? { ...node, $ref: `${DEFS_ID}#/$defs/${node.$ref.slice(COMPONENT_PREFIX.length)}` } : node,
  ) as JsonSchema;
}

function locate(home: Home, pointer: string[]): { at: JsonPath; rest: string } {
  const inner = pointer.slice(0, home.envelope.length).join('/') === home.envelope.join('/') ? pointer.slice(home.envelope.length) : pointer;
  return { at: [...home.at, ...inner], rest: inner.join('.') };
}

/**
 * A ContractError naming the contract node behind an emit-time ajv failure, or null when the failure
 * does not come from a contract schema (then it is the generator's own bug and is rethrown as it is).
 */
export function locateEmitFailure(err: unknown, contract: LoadedContract, model: Model): ContractError | null {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats').default;
  const defs: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(model.schemas)) defs[name] = forAjv(schema);
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  const found: Diagnostic[] = [];
  const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
  // Schemas the meta-schema refuses, with the failing keyword's place.
  if (!ajv.validateSchema({ $id: DEFS_ID, $defs: defs })) {
    for (const e of ajv.errors ?? []) {
      const [, , name, ...pointer] = e.instancePath.split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
      const home = name ? homeOf(name, contract, model) : null;
      if (!home) continue;
      const { at, rest } = locate(home, pointer);
      found.push(diagnostic(home.source, at, 'invalid-schema', `${home.label}${rest ? ` at ${rest}` : ''} is refused by the JSON Schema 2020-12 meta-schema (${e.message ?? e.keyword}). Correct it here; the contract checks should have said so, please report the gap.`));
    }
  } else {
    // Schemas ajv cannot compile although they are valid JSON Schema: compile each alone to find it.
    ajv.addSchema({ $id: DEFS_ID, $defs: defs }, undefined, undefined, false);
    for (const name of Object.keys(defs)) {
      const home = homeOf(name, contract, model);
      if (!home) continue;
      try {
        ajv.getSchema(`${DEFS_ID}#/$defs/${name}`);
      } catch (compileError) {
        const message = compileError instanceof Error ? compileError.message.split('\n')[0] : String(compileError);
        found.push(diagnostic(home.source, home.at, 'invalid-schema', `The validator of ${home.label} cannot be compiled (${message}). Correct the schema here; the contract checks should have said so, please report the gap.`));
      }
    }
  }
  if (!found.length) return null;
  const error = new ContractError(found);
  error.cause = why;
  return error;
}
