// Broken contracts as authors break them (issue 30): each mistake is one error at its exact
// file:line:col, with its rule and a fix in the author's terms; knock-on errors are not shown; every
// error of every file comes in one run; ajv's own wording never reaches the author.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { emitValidators } from '../../generator/emit/validators.ts';
import { loadContract } from '../../generator/load.ts';
import { locateEmitFailure } from '../../generator/locate-emit.ts';
import { buildModel } from '../../generator/model.ts';
import { ContractError, formatDiagnostic } from '../../generator/source.ts';
import { ContractCopy } from './helpers.ts';

const T = 'families/tasks.yaml';
const C = 'schemas/common.yaml';
const GET = '- id: tasks.get';
/** Fragments of ajv's messages: none may reach the author. */
const AJV_TEXT = /must be equal to one of the allowed values|must match a schema in anyOf|schema is invalid|data\/|must be (number|boolean|array|object|string)\b|must NOT have|must match pattern/;

let copy: ContractCopy;
afterEach(() => copy?.cleanup());
const fresh = () => (copy = new ContractCopy());

/** The new read of the walkthrough, with its schema slip. */
const TASKS_COUNT = `  - id: tasks.count
    summary: Count the tasks the caller can see
    kind: read
    scope: tasks:read
    audience: [operator, client_admin, service_account]
    http: { method: GET, path: "/v1/tasks:count" }
    input: { properties: {} }
    output:
      type: object
      properties:
        count: { type: integr }
    mcp: { tool: true }

`;

function raiseTotals(c: ContractCopy, by: Record<string, number>): void {
  for (const [key, n] of Object.entries(by)) {
    const text = c.read('svc.yaml');
    const now = Number(new RegExp(`\\n  ${key}: (\\d+)`).exec(text)![1]);
    c.mutate('svc.yaml', 'totals:', `${key}: ${now}`, `${key}: ${now + n}`);
  }
}

describe('a wrong type is a located error in the author terms', () => {
  it('a schema type that is no JSON Schema type, in a new operation: located in the YAML, not in TasksCountOutput', () => {
    const c = fresh();
    c.mutate(T, '  - id: tasks.comments.list', '  - id: tasks.comments.list', `${TASKS_COUNT}  - id: tasks.comments.list`);
    raiseTotals(c, { operations: 1, reads: 1, tools: 1 });
    const at = c.locate(T, '- id: tasks.count', 'integr');
    const errors = c.check();
    expect(errors).toEqual([
      `${at} error [invalid-schema] tasks.count's output.properties.count.type is "integr", which is not one of array, boolean, integer, null, number, object, string. Did you mean integer? Write type: integer.`,
    ]);
    expect(errors.join('\n')).not.toMatch(AJV_TEXT);
    expect(errors.join('\n')).not.toContain('TasksCountOutput');
  });

  it('a type list with one wrong member points at that member', () => {
    const c = fresh();
    const at = c.mutate(C, 'PageSize:', 'type: integer', 'type: [integer, nul]', 'nul]');
    expect(c.check()).toEqual([
      `${at} error [invalid-schema] PageSize's type[1] is "nul", which is not one of array, boolean, integer, null, number, object, string. Did you mean null? Write null.`,
    ]);
  });

  it('a minimum that is not a number', () => {
    const c = fresh();
    const at = c.mutate(C, 'PageSize:', 'minimum: 1', 'minimum: "zero"', '"zero"');
    expect(c.check()).toEqual([`${at} error [invalid-schema] PageSize's minimum is the string "zero", but it must be a number. Write a number, e.g. minimum: 0.`]);
  });

  it('a number written as a string says to drop the quotes', () => {
    const c = fresh();
    const at = c.mutate(C, 'PageSize:', 'maximum: 200', 'maximum: "200"', '"200"');
    expect(c.check()).toEqual([`${at} error [invalid-schema] PageSize's maximum is the string "200", but it must be a number. Write maximum: 200 without quotes.`]);
  });

  it('mcp: { tool: "yes" } says tool is a boolean (and nothing about a missing reason)', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'mcp: { tool: true }', 'mcp: { tool: "yes" }', '"yes"');
    expect(c.check()).toEqual([`${at} error [invalid-type] tasks.get's mcp.tool is the string "yes", but it must be a boolean (true or false). Write tool: true.`]);
  });

  it('audience: operator says audience is a list', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'audience: [operator, client_admin, service_account]', 'audience: operator', 'operator');
    expect(c.check()).toEqual([`${at} error [invalid-type] tasks.get's audience is the string "operator", but it must be a list. Write audience: [operator].`]);
  });

  it('a property schema written as a bare type name', () => {
    const c = fresh();
    const at = c.mutate(T, '- id: tasks.update', 'description: { type: string, maxLength: 10000 }', 'description: string', 'string');
    expect(c.check()).toEqual([
      `${at} error [invalid-schema] tasks.update's input.properties.description is the string "string", but it must be a map (a schema) or true/false. Write description: { type: string }.`,
    ]);
  });

  it('an empty enum (which ajv would refuse while emitting)', () => {
    const c = fresh();
    const at = c.mutate(T, '- id: tasks.update', 'enum: [open, in_progress, blocked]', 'enum: []', '[]');
    expect(c.check()).toEqual([
      `${at} error [invalid-schema] tasks.update's input.properties.status.enum is an empty list, but it must have at least 1 item. List at least one value, or remove enum.`,
    ]);
  });

  it('a pattern that is not a regular expression in unicode mode (as ajv compiles it)', () => {
    const c = fresh();
    const at = c.mutate(C, 'Cursor:', 'minLength: 1', 'minLength: 1\n  pattern: "[a-z\\\\-"', '"[a-z');
    expect(c.check()).toEqual([
      `${at} error [invalid-schema] The pattern "[a-z\\\\-" is not a valid regular expression in unicode mode (/[a-z\\-/u: Unterminated character class). Fix it: JSON Schema patterns are ECMA-262 regular expressions with the u flag, where only syntax characters may be escaped.`,
    ]);
  });
});

describe('did you mean', () => {
  it('an invalid kind names the near miss, and the totals it upsets are not reported as well', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'kind: read', 'kind: reed', 'reed');
    expect(c.check()).toEqual([`${at} error [invalid-kind] tasks.get's kind is "reed", which is not one of read, command. Did you mean read? Write kind: read.`]);
  });

  it('an enum value in the wrong case', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'method: GET', 'method: get', 'get');
    expect(c.check()).toEqual([`${at} error [invalid-method] tasks.get's http.method is "get", which is not one of GET, POST, PATCH, PUT, DELETE. Did you mean GET? Write method: GET.`]);
  });

  it('a format name', () => {
    const c = fresh();
    const at = c.mutate(C, 'Cursor:', 'minLength: 1', 'minLength: 1\n  format: emial', 'emial');
    expect(c.check()).toEqual([
      `${at} error [invalid-schema] Cursor's format is "emial", which is not one of date, time, date-time, iso-time, iso-date-time, duration, uri, uri-reference, uri-template, url, email, hostname, ipv4, ipv6, regex, uuid, json-pointer, json-pointer-uri-fragment, relative-json-pointer, byte, int32, int64, float, double, password, binary. Did you mean email? Write format: email.`,
    ]);
  });

  it('a misspelled required key is one error (its absence is the consequence)', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'summary:', 'sumary:', 'sumary');
    expect(c.check()).toEqual([`${at} error [unknown-key] tasks.get has the unknown key "sumary". Did you mean summary (so it has no summary)? Rename it to summary.`]);
  });
});

describe('YAML syntax', () => {
  it('an unclosed flow sequence is one error, at its bracket', () => {
    const c = fresh();
    c.mutate(T, GET, 'audience: [operator, client_admin, service_account]', 'audience: [operator, client_admin, service_account');
    const at = c.locate(T, GET, '[operator');
    const line = Number(at.split(':').at(-2));
    expect(c.check()).toEqual([
      `${at} error [yaml-syntax] This flow sequence ([) is never closed, so the YAML parser reads on and fails at line ${line + 1}. Close it with ] on line ${line}.`,
    ]);
  });

  it('a cascade of parser errors is reported as its first', () => {
    const c = fresh();
    c.mutate(T, GET, '    kind: read\n', '   kind: read\n');
    const errors = c.check();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^\S+families\/tasks\.yaml:\d+:\d+ error \[yaml-syntax\] .+\. Fix the YAML syntax at this position\. \(\d+ more YAML errors in this file follow from it and are not shown\.\)$/);
  });
});

describe('files', () => {
  it('an empty family file is an error, not a family that silently disappears', () => {
    const c = fresh();
    writeFileSync(c.file('families/notes.yaml'), '# to be written\n');
    const file = c.locate('families/notes.yaml', '', '#').replace(/:1:1$/, '');
    expect(c.check()).toEqual([`${file}:1:1 error [missing-field] This family file is empty. Write family: <name> and operations: [...], or delete the file.`]);
  });
});

describe('every error of a run, together', () => {
  it("a schema named like a generated one is reported with the run's other errors", () => {
    const c = fresh();
    const clash = c.mutate(C, 'PageSize:', 'PageSize:', 'PageSize:\n  type: integer\nTasksGetOutput:', 'TasksGetOutput');
    const scope = c.mutate(T, GET, 'scope: tasks:read', 'scope: tasks:reed', 'tasks:reed');
    expect(c.check()).toEqual([
      `${scope} error [unknown-scope] Scope "tasks:reed" is not declared in svc.yaml. Did you mean tasks:read? Use one of the scopes in svc.yaml, or add it there (and adjust totals.scopes).`,
      `${clash} error [generated-name-clash] Schema TasksGetOutput has the name the generator gives to tasks.get's output. Rename the contract schema.`,
    ]);
  });

  it('two unrelated errors in two files, as svc generate prints them: exit 1, nothing written, no ajv text', () => {
    const c = fresh();
    const key = c.mutate(T, GET, 'summary:', 'sumary:', 'sumary');
    const type = c.mutate(C, 'PageSize:', 'type: integer', 'type: integr', 'integr');
    const out = path.join(c.dir, '..', 'generated');
    let stderr = '';
    let status = 0;
    try {
      execFileSync(process.execPath, ['bin/svc.js', 'generate', '--contract', c.dir, '--out', out], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      const e = err as { status: number; stderr: string };
      status = e.status;
      stderr = e.stderr;
    }
    expect(status).toBe(1);
    // Files sort by name: families/ before schemas/.
    expect(stderr.trim().split('\n')).toEqual([
      `${key} error [unknown-key] tasks.get has the unknown key "sumary". Did you mean summary (so it has no summary)? Rename it to summary.`,
      `${type} error [invalid-schema] PageSize's type is "integr", which is not one of array, boolean, integer, null, number, object, string. Did you mean integer? Write type: integer.`,
      '',
      '2 contract errors; nothing was generated.',
    ]);
    expect(stderr).not.toMatch(AJV_TEXT);
  }, 120_000);

  it('shape errors and the rules that relate values are reported in one run', () => {
    const c = fresh();
    const tool = c.mutate(T, GET, 'mcp: { tool: true }', 'mcp: { tool: "yes" }', '"yes"');
    const scope = c.mutate(T, '- id: tasks.create', 'scope: tasks:write', 'scope: tasks:wirte', 'tasks:wirte');
    const status = c.mutate('svc.yaml', 'not_found:', 'status: 404', 'status: "404"', '"404"');
    expect(c.check()).toEqual([
      `${tool} error [invalid-type] tasks.get's mcp.tool is the string "yes", but it must be a boolean (true or false). Write tool: true.`,
      `${scope} error [unknown-scope] Scope "tasks:wirte" is not declared in svc.yaml. Did you mean tasks:write? Use one of the scopes in svc.yaml, or add it there (and adjust totals.scopes).`,
      `${status} error [invalid-problem] Problem not_found's status is the string "404", but it must be an integer. Write status: 404 without quotes.`,
    ]);
  });
});

describe('an ajv failure while emitting (the checks let nothing through; this is the net behind them)', () => {
  it('is located at the contract node the failing schema came from', () => {
    const contract = loadContract(path.resolve('contract'));
    const model = buildModel(contract);
    // A schema the checks would refuse, planted after them: ajv throws "enum must have non-empty array".
    const status = (model.schemas.TaskStatus ?? Object.values(model.schemas).find((s) => Array.isArray(s.enum))) as { enum: unknown[] };
    const name = Object.entries(model.schemas).find(([, s]) => s === status)![0];
    status.enum = [];
    let thrown: unknown;
    try {
      emitValidators(model);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(Error);
    const located = locateEmitFailure(thrown, contract, model);
    expect(located).toBeInstanceOf(ContractError);
    const source = contract.schemaFiles.find((f) => name in (f.data as object))!;
    const text = located!.diagnostics.map(formatDiagnostic).join('\n');
    expect(text).toContain(`${source.file}:`);
    expect(text).toContain(`[invalid-schema] The validator of schema ${name} cannot be compiled (enum must have non-empty array).`);
  });
});
