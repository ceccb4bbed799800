// One failing contract per check rule: the exact file:line:col, rule id and message.
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ContractCopy, SPEC_TOTALS, SPEC_TOTALS_REASON } from './helpers.ts';

const T = 'families/tasks.yaml';
const GET = '- id: tasks.get';
const CREATE = '- id: tasks.create';

let copy: ContractCopy;
afterEach(() => copy?.cleanup());

function fresh(): ContractCopy {
  copy = new ContractCopy();
  return copy;
}

describe('the real contract', () => {
  it('passes every rule', () => {
    expect(fresh().check()).toEqual([]);
  });

  it('declares the totals the spec binds', () => {
    expect((parse(readFileSync('contract/svc.yaml', 'utf8')) as { totals: unknown }).totals, SPEC_TOTALS_REASON).toEqual(SPEC_TOTALS);
  });
});

describe('check rules', () => {
  it('yaml-syntax: an unclosed flow map is reported at its brace (totals are not counted while a file does not parse)', () => {
    const c = fresh();
    c.mutate('families/meta.yaml', 'http:', 'path: /v1/meta }', 'path: /v1/meta');
    const at = c.locate('families/meta.yaml', 'http:', '{ method');
    const failedAt = Number(c.locate('families/meta.yaml', 'http:', 'input:').split(':').at(-2));
    expect(c.check()).toEqual([
      `${at} error [yaml-syntax] This flow map ({) is never closed, so the YAML parser reads on and fails at line ${failedAt}. Close it with } on line ${failedAt - 1}.`,
    ]);
  });

  it('unknown-operation-id-shape', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'tasks.get', 'Tasks.Get');
    expect(c.check()).toEqual([
      `${at} error [unknown-operation-id-shape] Operation id is "Tasks.Get", which is not <family>.<name>[.<name>] in lower snake_case. Rename it, e.g. tasks.create or webhooks.endpoint.rotate_secret.`,
    ]);
  });

  it('duplicate-operation-id (across files)', () => {
    const c = fresh();
    const first = c.locate('families/meta.yaml', '- id: meta.get', 'meta.get');
    const at = c.mutate(T, GET, 'tasks.get', 'meta.get');
    expect(c.check()).toContain(
      `${at} error [duplicate-operation-id] Operation id meta.get is already defined at ${first}. Give each operation its own id.`,
    );
  });

  it('generated-name-clash: two operation ids that give one Pascal name (and so one pair of generated schemas)', () => {
    const c = fresh();
    const first = c.locate(T, '- id: tasks.comments.list', 'tasks.comments.list');
    const at = c.mutate(T, '- id: tasks.comment\n', 'id: tasks.comment\n', 'id: tasks.comments_list\n', 'tasks.comments_list');
    expect(c.check()).toContain(
      `${at} error [generated-name-clash] Operation id tasks.comments_list gives the generated name TasksCommentsList (TasksCommentsListInput, TasksCommentsListOutput), which tasks.comments.list at ${first} already gives. Rename one of the two operations.`,
    );
  });

  it('duplicate-route', () => {
    const c = fresh();
    const first = c.locate(T, GET, '"/v1/tasks/{task_id}"');
    const at = c.mutate(T, '- id: tasks.comments.list', '"/v1/tasks/{task_id}/comments"', '"/v1/tasks/{id}"');
    const errors = c.check();
    expect(errors).toContain(`${at} error [duplicate-route] GET /v1/tasks/{id} is already routed at ${first}. Give each operation its own method and path.`);
  });

  it('missing-path-parameter (after resolving $ref)', () => {
    const c = fresh();
    const at = c.mutate(T, GET, '"/v1/tasks/{task_id}"', '"/v1/tasks/{taskId}"');
    expect(c.check()).toEqual([
      `${at} error [missing-path-parameter] Path parameter {taskId} is not a property of tasks.get's input. Add taskId to input.properties (and to input.required).`,
    ]);
  });

  it('unknown-ref', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'output: { $ref: Task }', 'output: { $ref: Tsk }', 'Tsk');
    expect(c.check()).toEqual([
      `${at} error [unknown-ref] $ref "Tsk" names no schema in schemas/. Did you mean Task? Use the name of a schema defined in contract/schemas/*.yaml, or define it there.`,
    ]);
  });

  it('unknown-scope', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'scope: tasks:read', 'scope: tasks:reed', 'tasks:reed');
    expect(c.check()).toEqual([
      `${at} error [unknown-scope] Scope "tasks:reed" is not declared in svc.yaml. Did you mean tasks:read? Use one of the scopes in svc.yaml, or add it there (and adjust totals.scopes).`,
    ]);
  });

  it('unknown-problem-code', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'errors: [not_found]', 'errors: [not_foud]', 'not_foud');
    expect(c.check()).toEqual([
      `${at} error [unknown-problem-code] Problem code "not_foud" is neither built in nor in svc.yaml problems. Did you mean not_found? Use a built-in or declared code, or declare it in svc.yaml with status, title and retry.`,
    ]);
  });

  it('unknown-problem-code accepts a built-in code svc.yaml does not declare', () => {
    const c = fresh();
    c.mutate('svc.yaml', 'problems:', '  not_found:\n    status: 404\n    title: Not found\n    retry: after_fix\n', '');
    expect(c.check()).toEqual([]);
  });

  it('unknown-principal: a principal kind the runtime does not authenticate', () => {
    const c = fresh();
    const at = c.mutate('svc.yaml', 'principals:', '- name: client_admin', '- name: user', 'user');
    const errors = c.check();
    expect(errors).toContain(
      `${at} error [unknown-principal] Principal "user" is not a kind the runtime authenticates, so no caller could reach an operation for it. Use operator, client_admin, service_account (an operator is a staff user or an unbound API key, a client_admin an administrator of one client, a service_account an API key bound to clients).`,
    );
  });

  it('unknown-event-type', () => {
    const c = fresh();
    const at = c.mutate(T, CREATE, 'emits: [task.created]', 'emits: [task.craeted]', 'task.craeted');
    expect(c.check()).toEqual([
      `${at} error [unknown-event-type] Event type "task.craeted" is not in svc.yaml eventTypes. Did you mean task.created? Use a declared event type, or declare it there (and adjust totals.eventTypes).`,
    ]);
  });

  it('command-without-tier', () => {
    const c = fresh();
    c.mutate(T, CREATE, '    tier: 1\n', '');
    const at = c.locate(T, CREATE, 'id: tasks.create');
    expect(c.check()).toEqual([
      `${at} error [command-without-tier] Command tasks.create has no tier. Add tier: 1 (runs at once), 2 or 3 (becomes a proposal).`,
    ]);
  });

  it('command-without-subject: a Tier 2 command says how its subject is found', () => {
    const c = fresh();
    c.mutate(T, CREATE, '    tier: 1\n', '    tier: 2\n');
    const at = c.locate(T, CREATE, 'id: tasks.create');
    expect(c.check()).toEqual([
      `${at} error [command-without-subject] tasks.create is Tier 2 but has no subject. Add subject: { resource: <type>, from: <input member> }, or subject: { none: <why it has no client> }.`,
    ]);
  });

  it('invalid-subject: the subject is found from an input member', () => {
    const c = fresh();
    c.mutate(T, CREATE, '    tier: 1\n', '    tier: 2\n    subject: { resource: project, from: nope }\n');
    expect(c.check().join('\n')).toContain('[invalid-subject] tasks.create finds its subject from "nope", which is not an input member.');
  });

  it('read-with-tier', () => {
    const c = fresh();
    const at = c.mutate(T, GET, '    kind: read\n', '    kind: read\n    tier: 1\n', 'tier: 1');
    expect(c.check()).toEqual([`${at} error [read-with-tier] Read tasks.get has a tier. Remove tier: only commands are tiered.`]);
  });

  it('invalid-tier', () => {
    const c = fresh();
    const at = c.mutate(T, CREATE, 'tier: 1', 'tier: 4', '4');
    expect(c.check()).toEqual([`${at} error [invalid-tier] tasks.create's tier is 4, which is not one of 1, 2, 3, null. Use tier 1 (runs at once), 2 or 3 (becomes a proposal); reads have none.`]);
  });

  it('tool-without-annotations', () => {
    const c = fresh();
    const at = c.mutate(T, CREATE, 'mcp: { tool: true, destructive: false, idempotent: false }', 'mcp: { tool: true, idempotent: false }', '{ tool');
    expect(c.check()).toEqual([
      `${at} error [tool-without-annotations] Command tool tasks.create does not say destructive. Add destructive: true|false to mcp.`,
    ]);
  });

  it('non-tool-without-reason', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'mcp: { tool: true }', 'mcp: { tool: false }', '{ tool');
    expect(c.check()).toContain(
      `${at} error [non-tool-without-reason] tasks.get is not an MCP tool and gives no reason. Add mcp: {tool: false, reason: "<why agents do not get it>"} or mcp: {tool: true, ...}.`,
    );
  });

  it('enum-without-openness', () => {
    const c = fresh();
    c.mutate(T, '- id: tasks.update', '          x-svc-enum: closed\n', '');
    const at = c.locate(T, '- id: tasks.update', 'enum: [open');
    expect(c.check()).toEqual([
      `${at} error [enum-without-openness] This enum does not say whether it is open or closed. Add x-svc-enum: open (may gain values in a minor release) or x-svc-enum: closed.`,
    ]);
  });

  it('family-mismatch', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'tasks.get', 'task.get');
    expect(c.check()).toEqual([
      `${at} error [family-mismatch] Operation task.get is in family tasks but its id starts with task. Start the id with "tasks." or move it to families/task.yaml.`,
    ]);
  });

  it('totals', () => {
    const c = fresh();
    const n = SPEC_TOTALS.operations;
    const at = c.mutate('svc.yaml', 'totals:', `operations: ${n}`, `operations: ${n + 1}`, 'operations');
    expect(c.check(), SPEC_TOTALS_REASON).toEqual([
      `${at} error [totals] totals.operations declares ${n + 1} but the contract has ${n}. Add or remove operations until the count matches, or correct the declared total.`,
    ]);
  });

  it('unknown-audience', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'audience: [operator,', 'audience: [robot,', 'robot');
    expect(c.check()).toEqual([
      `${at} error [unknown-audience] Audience "robot" is not a principal in svc.yaml. Use operator, client_admin, service_account.`,
    ]);
  });

  it('missing-output', () => {
    const c = fresh();
    c.mutate(T, GET, '    output: { $ref: Task }\n', '');
    const at = c.locate(T, GET, 'id: tasks.get');
    expect(c.check()).toEqual([
      `${at} error [missing-output] Read tasks.get has neither output nor page. Add output: {$ref: ...} (or page: {$ref: ...} for a paged list).`,
    ]);
  });

  it('invalid-method', () => {
    const c = fresh();
    const at = c.mutate(T, GET, 'method: GET', 'method: FETCH', 'FETCH');
    expect(c.check()).toEqual([`${at} error [invalid-method] tasks.get's http.method is "FETCH", which is not one of GET, POST, PATCH, PUT, DELETE. Use one of them.`]);
  });

  it('creating-post-without-idempotency', () => {
    const c = fresh();
    const at = c.mutate(T, CREATE, 'idempotency: required', 'idempotency: honoured', 'honoured');
    expect(c.check()).toEqual([
      `${at} error [creating-post-without-idempotency] Creating POST tasks.create (status 201) does not require an Idempotency-Key. Add idempotency: required.`,
    ]);
  });

  it('input-union', () => {
    const c = fresh();
    const at = c.mutate(T, GET, '      required: [task_id]\n', '      required: [task_id]\n      anyOf: [{ required: [task_id] }]\n', 'required: [task_id]');
    expect(c.check()).toEqual([
      `${at} error [input-union] tasks.get's input has a top-level anyOf/oneOf, which MCP clients reject and REST cannot spread over path, query and body. Make the input one object; express alternatives as optional properties and document the rule.`,
    ]);
  });

  it('reports several errors of one run together, in file order', () => {
    const c = fresh();
    const scope = c.mutate(T, GET, 'scope: tasks:read', 'scope: tasks:reed', 'tasks:reed');
    const method = c.mutate(T, GET, 'method: GET', 'method: FETCH', 'FETCH');
    const tools = SPEC_TOTALS.tools;
    const totals = c.mutate('svc.yaml', 'totals:', `tools: ${tools}`, `tools: ${tools + 1}`, 'tools');
    const errors = c.check();
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatch(new RegExp(`^${scope.replace(/[.]/g, '\\.')} error \\[unknown-scope\\]`));
    expect(errors[1]).toMatch(new RegExp(`^${method.replace(/[.]/g, '\\.')} error \\[invalid-method\\]`));
    expect(errors[2], SPEC_TOTALS_REASON).toMatch(new RegExp(`^${totals.replace(/[.]/g, '\\.')} error \\[totals\\] totals\\.tools declares ${tools + 1} but the contract has ${tools}\\.`));
  });
});
