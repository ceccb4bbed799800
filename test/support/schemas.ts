// Checks a REST body against a component schema of the published OpenAPI document (JSON Schema
// 2020-12), so a handler's result is proved to match its contract, not just a test's expectations.
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

const doc = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, strict: false });
(addFormats as unknown as (a: unknown) => void)(ajv);
ajv.addSchema({ ...doc, $id: 'svc-openapi' });

/** Fails the test unless `value` is a valid `components.schemas[name]`. */
export function expectSchema(name: string, value: unknown): void {
  const validate = ajv.getSchema(`svc-openapi#/components/schemas/${name}`);
  if (!validate) throw new Error(`no component schema ${name}`);
  const valid = validate(value);
  expect(valid ? [] : validate.errors, `${name}: ${JSON.stringify(value).slice(0, 300)}`).toEqual([]);
}
