// The contract-format validators: the committed standalone module when it was built from the current
// contract.schema.json, else the schema compiled now (a development state that a test refuses).
import { readFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import * as prebuilt from './validators.generated.js';
import { compileInProcess, SCHEMA_FILE, schemaHash, type FormatValidators } from './build.ts';

let cached: FormatValidators | undefined;

export function formatValidators(): FormatValidators {
  if (cached) return cached;
  const fresh = prebuilt.schemaHash === schemaHash(readFileSync(SCHEMA_FILE, 'utf8'));
  cached = fresh ? { svcFile: prebuilt.svcFile, schemasFile: prebuilt.schemasFile, familyFile: prebuilt.familyFile } : compileInProcess();
  return cached;
}

/** Whether validators.generated.js matches contract.schema.json (for the test that keeps it so). */
export function prebuiltIsFresh(): boolean {
  return prebuilt.schemaHash === schemaHash(readFileSync(SCHEMA_FILE, 'utf8'));
}

export type { FormatValidators, ValidateFunction };
