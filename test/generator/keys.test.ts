// Closed key sets and truthful annotations: one failing contract per check, with its exact position and message.
import { afterEach, describe, expect, it } from 'vitest';
import { ContractCopy } from './helpers.ts';

const T = 'families/tasks.yaml';
const GET = '- id: tasks.get';
const SCHEMA_KEYS =
  '$ref, type, description, title, enum, const, default, examples, example, format, deprecated, readOnly, writeOnly, properties, required, additionalProperties, patternProperties, propertyNames, minProperties, maxProperties, items, prefixItems, minItems, maxItems, uniqueItems, contains, minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, allOf, anyOf, oneOf, not, if, then, else, dependentRequired, contentMediaType, contentEncoding, decision, x-svc-enum, x-svc-secret, x-svc-personal';
const COMMA_HINT = '(A comma inside an unquoted flow-map value starts a new key: quote the value.)';

let copy: ContractCopy;
afterEach(() => copy?.cleanup());
const fresh = () => (copy = new ContractCopy());

describe('closed key sets', () => {
  it('unknown-key: a scope description cut at its comma', () => {
    const c = fresh();
    const at = c.mutate('svc.yaml', '{ name: tasks:write', '"Create, update, complete and comment on tasks."', 'Create, update, complete and comment on tasks.', 'update');
    const at2 = c.locate('svc.yaml', '{ name: tasks:write', 'complete and');
    expect(c.check()).toEqual([
      `${at} error [unknown-key] Scope tasks:write has the unknown key "update". Allowed keys: name, description, decision. ${COMMA_HINT}`,
      `${at2} error [unknown-key] Scope tasks:write has the unknown key "complete and comment on tasks.". Allowed keys: name, description, decision. ${COMMA_HINT}`,
    ]);
  });

  it('unknown-key: a mistyped operation key is a near miss, and the missing summary its consequence', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'summary:', 'sumary:', 'sumary');
    expect(c.check()).toEqual([`${at} error [unknown-key] tasks.get has the unknown key "sumary". Did you mean summary (so it has no summary)? Rename it to summary.`]);
  });

  it('unknown-key: a key that resembles none lists the allowed keys', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'summary: Get a task\n', 'summary: Get a task\n    colour: red\n', 'colour');
    expect(c.check()).toEqual([
      `${at} error [unknown-key] tasks.get has the unknown key "colour". Allowed keys: id, summary, description, kind, tier, scope, audience, http, input, output, result, page, stream, idempotency, ifMatch, errors, emits, mcp, deprecated, decision, subject, final.`,
    ]);
  });

  it('unknown-key: inside a schema', () => {
    const c = fresh();
    const at = c.mutate('schemas/common.yaml', 'Id:', 'minLength: 1', 'minLenght: 1', 'minLenght');
    const name = /\n(\w+):\n[^\n]*\n?[^\n]*$/.exec(c.read('schemas/common.yaml').slice(0, c.read('schemas/common.yaml').indexOf('minLenght')))?.[1];
    expect(c.check()).toEqual([`${at} error [unknown-key] Schema ${name} has the unknown key "minLenght". Did you mean minLength? Rename it to minLength.`]);
  });

  it('unknown-key: inside a schema, with no near miss', () => {
    const c = fresh();
    const at = c.mutate('schemas/common.yaml', 'Id:', 'minLength: 1', 'minLength: 1\n  discriminator: kind', 'discriminator');
    expect(c.check().map((l) => l.replace(/Schema \w+ /, 'Schema X '))).toEqual([`${at} error [unknown-key] Schema X has the unknown key "discriminator". Allowed keys: ${SCHEMA_KEYS}.`]);
  });

  it('admits the extensions other parts of the contract use (x-svc-secret, x-svc-personal, new limits; subject has its own rules in subjects.test.ts)', () => {
    const c = fresh();
    c.mutate('schemas/common.yaml', 'Id:', 'minLength: 1', 'minLength: 1\n  x-svc-secret: true\n  x-svc-personal: true');
    c.mutate('svc.yaml', 'limits:', 'limits:', 'limits:\n  someNewLimit: 5');
    expect(c.check()).toEqual([]);
  });

  it('null-key', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'summary:', 'stream:\n    summary:', 'stream');
    expect(c.check()).toContain(`${at} error [null-key] tasks.get has stream with no value (null). Give stream a value or remove the key.`);
  });

  it('null-key in limits', () => {
    const c = fresh();
    const at = c.mutate('svc.yaml', 'limits:', 'limits:', 'limits:\n  someNewLimit:', 'someNewLimit');
    expect(c.check()).toEqual([`${at} error [null-key] limits has someNewLimit with no value (null). Give someNewLimit a value or remove the key.`]);
  });
});

describe('annotation-contradiction', () => {
  it('an overwriting command (PATCH) that says destructive: false', () => {
    const c = fresh();
    const at = c.mutate(T, '- id: tasks.update', 'destructive: true', 'destructive: false', 'false');
    expect(c.check()).toEqual([`${at} error [annotation-contradiction] tasks.update says destructive: false, but it overwrites stored values (PATCH). Write destructive: true.`]);
  });

  it('a final command that says destructive: false', () => {
    const c = fresh();
    const at = c.mutate(T, '- id: tasks.complete', 'destructive: true', 'destructive: false', 'false');
    expect(c.check()).toEqual([
      `${at} error [annotation-contradiction] tasks.complete says destructive: false, but it reaches a state with no way back (final: true). Write destructive: true.`,
    ]);
  });

  it('a Tier 2 proposal that says idempotent: true', () => {
    const c = fresh();
    const at = c.mutate('families/reviews.yaml', '- id: reviews.release', 'idempotent: false', 'idempotent: true', 'true');
    expect(c.check()).toEqual([
      `${at} error [annotation-contradiction] reviews.release says idempotent: true, but as a Tier 2 command every call without a reused idempotency key files a new approval. Write idempotent: false.`,
    ]);
  });
});
