// Compiles contract.schema.json (the contract format, with the JSON Schema 2020-12 meta-schema for
// the schemas inside the contract) into ajv standalone code, committed as validators.generated.js.
// Compiling the meta-schema and the format takes ajv about 130 ms; loading the compiled module takes
// a few, so `svc generate` loads it. The module carries a hash of the schema (and of ajv's version):
// index.ts compiles the schema in process instead when they differ, and a test fails until the
// module is rebuilt with
//   node --import tsx generator/contract-format/build.ts --write
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { GENERATOR_DIR } from '../paths.ts';

const require = createRequire(import.meta.url);

export const SCHEMA_FILE = fileURLToPath(new URL('contract-format/contract.schema.json', GENERATOR_DIR));
export const MODULE_FILE = fileURLToPath(new URL('contract-format/validators.generated.js', GENERATOR_DIR));
export const FORMAT_ID = 'https://svc.invalid/contract-format/contract.schema.json';

/** The validators every contract file is checked with, by the $defs entry they compile. */
export const ENTRIES = { svcFile: 'svcFile', schemasFile: 'schemasFile', familyFile: 'familyFile' } as const;
export type FormatValidators = Record<keyof typeof ENTRIES, ValidateFunction>;

export function schemaText(): string {
  return readFileSync(SCHEMA_FILE, 'utf8');
}

/** What the compiled module was built from: the schema's text and ajv's version. */
export function schemaHash(text: string): string {
  const ajvVersion = (require('ajv/package.json') as { version: string }).version;
  return createHash('sha256').update(`ajv ${ajvVersion}\n${text}`).digest('hex').slice(0, 16);
}

/** verbose: errors carry the schema node they failed (its x-rule, x-missing, x-fix annotations). */
function newAjv(standalone: boolean) {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats').default;
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    strict: false,
    logger: false,
    ...(standalone ? { code: { source: true, esm: true, lines: true } } : {}),
  });
  addFormats(ajv);
  ajv.addSchema(JSON.parse(schemaText()) as object);
  return ajv;
}

/** The validators compiled now (about 130 ms): used when the committed module is out of date. */
export function compileInProcess(): FormatValidators {
  const ajv = newAjv(false);
  const out = {} as FormatValidators;
  for (const [name, def] of Object.entries(ENTRIES)) out[name as keyof FormatValidators] = ajv.getSchema(`${FORMAT_ID}#/$defs/${def}`)!;
  return out;
}

export function standaloneSource(): string {
  const text = schemaText();
  const ajv = newAjv(true);
  const standaloneCode = require('ajv/dist/standalone/index.js').default as typeof import('ajv/dist/standalone/index.js').default;
  const exportsMap: Record<string, string> = {};
  for (const [name, def] of Object.entries(ENTRIES)) exportsMap[name] = `${FORMAT_ID}#/$defs/${def}`;
  const code = standaloneCode(ajv, exportsMap);
  return [
    '// Generated from generator/contract-format/contract.schema.json by generator/contract-format/build.ts; do not edit.',
    '// Rebuild: node --import tsx generator/contract-format/build.ts --write',
    '/* eslint-disable */',
    'import { createRequire } from "node:module";',
    'const require = createRequire(import.meta.url);',
    `export const schemaHash = ${JSON.stringify(schemaHash(text))};`,
    code.replace(/^"use strict";/, ''),
    '',
  ].join('\n');
}

export const DECLARATIONS = `// Generated with validators.generated.js; do not edit.
import type { ValidateFunction } from 'ajv';
export declare const schemaHash: string;
export declare const svcFile: ValidateFunction;
export declare const schemasFile: ValidateFunction;
export declare const familyFile: ValidateFunction;
`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const source = standaloneSource();
  const declarations = MODULE_FILE.replace(/\.js$/, '.d.ts');
  if (process.argv.includes('--write')) {
    writeFileSync(MODULE_FILE, source);
    writeFileSync(declarations, DECLARATIONS);
    console.log(`wrote ${MODULE_FILE} (${source.length} bytes)`);
  } else {
    const current = readFileSync(MODULE_FILE, 'utf8');
    console.log(current === source ? 'validators.generated.js is up to date' : 'validators.generated.js is out of date: run with --write');
    process.exitCode = current === source ? 0 : 1;
  }
}
