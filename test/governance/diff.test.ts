// One contract mutation per rule of `svc diff`: classification, rule id, subject and file:line:col.
import { afterAll, describe, expect, it } from 'vitest';
import { verdict } from '../../generator/diff/command.ts';
import { diffContracts } from '../../generator/diff/engine.ts';
import { RULES, type Finding } from '../../generator/diff/rules.ts';
import { compileContract } from '../../generator/snapshot.ts';
import { cleanupCopies, FIXTURE, fixtureBase, loc, mutate, totals, type Edits } from './helpers.ts';

afterAll(cleanupCopies);

const N = 'families/notes.yaml';
const T = 'families/tasks.yaml';
const S = 'schemas/notes.yaml';
const SVC = 'svc.yaml';

const NEW_OP = `
  - id: notes.get
    summary: Get a note
    kind: read
    scope: tasks:read
    audience: [operator]
    http: { method: GET, path: "/v1/notes/{note_id}" }
    input:
      required: [note_id]
      properties:
        note_id: { $ref: Id }
    output: { $ref: Note }
    mcp: { tool: true }
`;

interface Case {
  name: string;
  edits: Edits;
  rule: string;
  subject: string;
  /** Expected location: in the mutated copy (head) or the fixture (base, for removals). */
  at: (dir: string) => string;
}

const head = (rel: string, needle: string, nth = 1) => (dir: string) => loc(dir, rel, needle, nth);
const base = (rel: string, needle: string, nth = 1) => () => loc(FIXTURE, rel, needle, nth);

const cases: Case[] = [
  // ---- additive
  {
    name: 'a new operation',
    edits: { [N]: [[/$/, NEW_OP]], [SVC]: [totals('operations', 13), totals('reads', 6), totals('tools', 12)] },
    rule: 'operation-added',
    subject: 'notes.get',
    at: head(N, 'id: notes.get'),
  },
  {
    name: 'a new optional input field',
    edits: { [N]: [['        reason: { type: string, maxLength: 500 }\n', '        reason: { type: string, maxLength: 500 }\n        color: { type: string }\n']] },
    rule: 'input-field-added',
    subject: 'notes.archive',
    at: head(N, 'color:'),
  },
  {
    name: 'a new output field (in a $ref-erenced schema)',
    edits: { [S]: [['    tags: { type: array, items: { type: string } }\n', '    tags: { type: array, items: { type: string } }\n    pinned: { type: boolean }\n']] },
    rule: 'output-field-added',
    subject: 'Note',
    at: head(S, 'pinned:'),
  },
  {
    name: 'a new value in an open enumeration',
    edits: { [S]: [['enum: [memo, call, email]', 'enum: [memo, call, email, sms]']] },
    rule: 'enum-value-added',
    subject: 'NoteKind',
    at: head(S, 'enum: [memo'),
  },
  {
    name: 'a new webhook event type',
    edits: {
      [SVC]: [
        ['  - { name: approval.rejected, description: A proposal was rejected. }\n', '  - { name: approval.rejected, description: A proposal was rejected. }\n  - { name: note.pinned, description: A note was pinned. }\n'],
        totals('eventTypes', 11),
      ],
    },
    rule: 'event-type-added',
    subject: 'note.pinned',
    at: head(SVC, 'name: note.pinned'),
  },
  {
    name: 'a new scope',
    edits: { [SVC]: [['  - { name: pii:read,', '  - { name: notes:pin, description: Pin notes. }\n  - { name: pii:read,'], totals('scopes', 33)] },
    rule: 'scope-added',
    subject: 'notes:pin',
    at: head(SVC, 'name: notes:pin'),
  },
  {
    name: 'an operation newly exposed as a tool',
    edits: { [N]: [['mcp: { tool: false, reason: Archiving is a human decision. }', 'mcp: { tool: true, destructive: false, idempotent: false }']], [SVC]: [totals('tools', 12)] },
    rule: 'mcp-tool-added',
    subject: 'notes.archive',
    at: head(N, 'mcp:', 3),
  },
  // ---- breaking: operations
  {
    name: 'a removed operation',
    edits: { [N]: [[/\n  - id: notes\.archive[\s\S]*$/, '\n']], [SVC]: [totals('operations', 11), totals('commands', 6)] },
    rule: 'operation-removed',
    subject: 'notes.archive',
    at: base(N, 'id: notes.archive'),
  },
  {
    name: 'a renamed operation',
    edits: { [N]: [['id: notes.archive', 'id: notes.retire']] },
    rule: 'operation-renamed',
    subject: 'notes.archive',
    at: head(N, 'id: notes.retire'),
  },
  {
    name: 'a renamed tool (its operation renamed)',
    edits: { [N]: [['id: notes.list', 'id: notes.browse']] },
    rule: 'mcp-tool-renamed',
    subject: 'notes.list',
    at: head(N, 'mcp:', 1),
  },
  {
    name: 'a changed HTTP method',
    edits: { [N]: [['method: POST, path: "/v1/notes/{note_id}:archive"', 'method: PUT, path: "/v1/notes/{note_id}:archive"']] },
    rule: 'http-method-changed',
    subject: 'notes.archive',
    at: head(N, 'method: PUT'),
  },
  {
    name: 'a changed HTTP path',
    edits: { [N]: [['path: /v1/notes }', 'path: /v1/memos }']] },
    rule: 'http-path-changed',
    subject: 'notes.list',
    at: head(N, 'path: /v1/memos'),
  },
  {
    name: 'a changed success status',
    edits: { [N]: [['status: 201', 'status: 200']] },
    rule: 'success-status-changed',
    subject: 'notes.create',
    at: head(N, 'status: 200'),
  },
  {
    name: 'a problem code an operation no longer answers',
    edits: { [N]: [['errors: [not_found, invalid_transition]', 'errors: [not_found]']] },
    rule: 'problem-code-removed',
    subject: 'notes.archive',
    at: head(N, 'errors:', 2),
  },
  {
    name: 'a problem code newly declared on an operation',
    edits: { [N]: [['errors: [not_found]\n    emits', 'errors: [not_found, conflict]\n    emits']] },
    rule: 'operation-problem-added',
    subject: 'notes.create',
    at: head(N, 'conflict]'),
  },
  {
    name: "a problem code's status changed in svc.yaml",
    edits: { [SVC]: [['status: 409\n    title: The request conflicts', 'status: 400\n    title: The request conflicts']] },
    rule: 'problem-status-changed',
    subject: 'conflict',
    at: head(SVC, 'status: 400\n    title: The request conflicts'),
  },
  {
    name: "a changed operation's scope",
    edits: { [N]: [['scope: tasks:read', 'scope: tasks:write']] },
    rule: 'operation-scope-changed',
    subject: 'notes.list',
    at: head(N, 'scope: tasks:write'),
  },
  {
    name: "a changed command's tier",
    edits: { [N]: [['tier: 2', 'tier: 3']] },
    rule: 'operation-tier-changed',
    subject: 'notes.archive',
    at: head(N, 'tier: 3'),
  },
  {
    name: 'a principal dropped from the audience',
    edits: { [N]: [['audience: [operator, client_admin, service_account]', 'audience: [operator, client_admin]']] },
    rule: 'audience-narrowed',
    subject: 'notes.list',
    at: head(N, 'audience:'),
  },
  {
    name: 'If-Match newly required',
    edits: { [N]: [['tier: 2\n', 'tier: 2\n    ifMatch: required\n']] },
    rule: 'if-match-required',
    subject: 'notes.archive',
    at: head(N, 'ifMatch: required'),
  },
  {
    name: 'an Idempotency-Key newly required',
    edits: { [T]: [['path: "/v1/tasks/{task_id}:complete" }\n', 'path: "/v1/tasks/{task_id}:complete" }\n    idempotency: required\n']] },
    rule: 'idempotency-required',
    subject: 'tasks.complete',
    at: head(T, 'idempotency: required', 3),
  },
  {
    name: 'an operation that no longer emits an event',
    edits: { [N]: [['emits: [task.updated]', 'emits: []']] },
    rule: 'event-emission-removed',
    subject: 'notes.create',
    at: head(N, 'emits: []'),
  },
  // ---- breaking: MCP
  {
    name: 'a removed tool',
    edits: { [N]: [['mcp: { tool: true }', 'mcp: { tool: false, reason: Not for agents. }']], [SVC]: [totals('tools', 10)] },
    rule: 'mcp-tool-removed',
    subject: 'notes.list',
    at: head(N, 'mcp:', 1),
  },
  {
    name: 'changed tool annotations',
    edits: { [N]: [['destructive: false, idempotent: false', 'destructive: true, idempotent: false']] },
    rule: 'mcp-annotations-changed',
    subject: 'notes.create',
    at: head(N, 'mcp:', 2),
  },
  {
    name: 'a narrowed tool input (idempotencyKey argument gone)',
    edits: { [T]: [['path: "/v1/tasks/{task_id}:complete" }\n', 'path: "/v1/tasks/{task_id}:complete" }\n    idempotency: none\n']] },
    rule: 'mcp-input-narrowed',
    subject: 'tasks.complete',
    at: head(T, 'idempotency: none'),
  },
  // ---- breaking: fields
  {
    name: 'a removed input field',
    edits: { [N]: [['        reason: { type: string, maxLength: 500 }\n', '']] },
    rule: 'input-field-removed',
    subject: 'notes.archive',
    at: base(N, 'reason:'),
  },
  {
    name: 'a removed output field',
    edits: { [S]: [['    tags: { type: array, items: { type: string } }\n', '']] },
    rule: 'output-field-removed',
    subject: 'Note',
    at: base(S, 'tags: { type: array, items: { type: string } }'),
  },
  {
    name: 'an output field no longer required',
    edits: { [S]: [['required: [id, body, kind, visibility, createdAt]', 'required: [id, body, visibility, createdAt]']] },
    rule: 'output-field-optional',
    subject: 'Note',
    at: head(S, 'kind: { $ref: NoteKind }', 2),
  },
  {
    name: 'an output field that may now be null',
    edits: { [S]: [['    body: { type: string }\n', '    body: { type: [string, "null"] }\n']] },
    rule: 'output-type-changed',
    subject: 'Note',
    at: head(S, 'type: [string, "null"]'),
  },
  {
    name: 'an optional input made required',
    edits: { [N]: [['required: [note_id]', 'required: [note_id, reason]']] },
    rule: 'input-field-required',
    subject: 'notes.archive',
    at: head(N, 'reason]'),
  },
  {
    name: 'a new required input field',
    edits: { [N]: [['required: [note_id]\n      properties:\n', 'required: [note_id, note]\n      properties:\n        note: { type: string }\n']] },
    rule: 'required-input-added',
    subject: 'notes.archive',
    at: head(N, 'note: { type: string }'),
  },
  // ---- breaking: validation tightened (through $ref and allOf)
  {
    name: 'a narrower maxLength (NoteDraft allOf -> $ref NoteBase)',
    edits: { [S]: [['maxLength: 5000', 'maxLength: 2000']] },
    rule: 'input-length-narrowed',
    subject: 'NoteBase',
    at: head(S, 'maxLength: 2000'),
  },
  {
    name: 'a narrower maximum',
    edits: { [S]: [['maximum: 100', 'maximum: 50']] },
    rule: 'input-range-narrowed',
    subject: 'NoteDraft',
    at: head(S, 'maximum: 50'),
  },
  {
    name: 'a narrower maxItems',
    edits: { [S]: [['maxItems: 10', 'maxItems: 5']] },
    rule: 'input-items-narrowed',
    subject: 'NoteDraft',
    at: head(S, 'maxItems: 5'),
  },
  {
    name: 'a new pattern',
    edits: { [N]: [['q: { type: string, maxLength: 100 }', 'q: { type: string, maxLength: 100, pattern: "^[a-z ]*$" }']] },
    rule: 'input-pattern-narrowed',
    subject: 'notes.list',
    at: head(N, 'pattern:'),
  },
  {
    name: 'a new format',
    edits: { [N]: [['reason: { type: string, maxLength: 500 }', 'reason: { type: string, maxLength: 500, format: email }']] },
    rule: 'input-format-narrowed',
    subject: 'notes.archive',
    at: head(N, 'format: email'),
  },
  {
    name: 'a removed type option',
    edits: { [T]: [['ownerId: { type: [string, "null"] }', 'ownerId: { type: string }']] },
    rule: 'input-type-narrowed',
    subject: 'tasks.update',
    at: (dir) => loc(dir, T, 'type: string }', 1),
  },
  {
    name: 'a removed anyOf option',
    edits: { [S]: [['{ anyOf: [{ type: string, format: uri }, { type: integer }] }', '{ anyOf: [{ type: string, format: uri }] }']] },
    rule: 'input-type-narrowed',
    subject: 'NoteDraft',
    at: base(S, '{ type: integer }'),
  },
  {
    name: 'a removed oneOf option',
    edits: { [S]: [['    - type: object\n      required: [clientId]\n      properties:\n        clientId: { $ref: Id }\n', '']] },
    rule: 'input-type-narrowed',
    subject: 'NoteTarget',
    at: base(S, 'type: object\n      required: [clientId]'),
  },
  {
    name: 'an input newly limited to an enumeration',
    edits: { [N]: [['q: { type: string, maxLength: 100 }', 'q: { type: string, maxLength: 100, enum: [a, b], x-svc-enum: open }']] },
    rule: 'input-enum-narrowed',
    subject: 'notes.list',
    at: head(N, 'enum: [a, b]'),
  },
  {
    name: 'additionalProperties tightened (Metadata via $ref in an allOf part)',
    edits: { 'schemas/common.yaml': [['additionalProperties: { type: string, maxLength: 500 }', 'additionalProperties: false']] },
    rule: 'additional-properties-tightened',
    subject: 'Metadata',
    at: head('schemas/common.yaml', 'additionalProperties: false'),
  },
  // ---- breaking: enumerations, scopes, event types
  {
    name: 'a value removed from an open enumeration',
    edits: { [S]: [['enum: [memo, call, email]', 'enum: [memo, email]']] },
    rule: 'enum-value-removed',
    subject: 'NoteKind',
    at: head(S, 'enum: [memo'),
  },
  {
    name: 'a value added to a closed enumeration',
    edits: { [S]: [['enum: [private, team, client]', 'enum: [private, team, client, public]']] },
    rule: 'closed-enum-changed',
    subject: 'NoteVisibility',
    at: head(S, 'enum: [private'),
  },
  {
    name: 'an open enumeration closed',
    edits: { [S]: [['x-svc-enum: open', 'x-svc-enum: closed']] },
    rule: 'enum-openness-changed',
    subject: 'NoteKind',
    at: head(S, 'x-svc-enum: closed', 1),
  },
  {
    name: 'a removed scope',
    edits: { [SVC]: [[/  - name: audit:read\n(    .*\n|      .*\n)*/, ''], totals('scopes', 31)] },
    rule: 'scope-removed',
    subject: 'audit:read',
    at: base(SVC, 'name: audit:read'),
  },
  {
    name: 'a new MCP tool prefix (every tool renamed)',
    edits: { [SVC]: [[/^info:/m, 'mcpToolPrefix: notes\ninfo:']] },
    rule: 'mcp-tool-prefix-changed',
    subject: 'mcpToolPrefix',
    at: head(SVC, 'mcpToolPrefix: notes'),
  },
  {
    name: 'a new API version header name',
    edits: { [SVC]: [[/^info:/m, 'apiVersionHeader: X-Notes-Version\ninfo:']] },
    rule: 'api-version-header-changed',
    subject: 'apiVersionHeader',
    at: head(SVC, 'apiVersionHeader: X-Notes-Version'),
  },
  {
    name: 'a removed webhook event type',
    edits: { [SVC]: [['  - { name: membership.revoked, description: A membership was revoked. }\n', ''], totals('eventTypes', 9)] },
    rule: 'event-type-removed',
    subject: 'membership.revoked',
    at: base(SVC, 'name: membership.revoked'),
  },
];

describe('svc diff classifies each contract mutation', () => {
  it('covers at least 25 mutations and every rule id it asserts exists', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
    for (const c of cases) expect(RULES[c.rule], c.rule).toBeDefined();
  });

  it('finds nothing between a contract and itself', () => {
    const findings = diffContracts(fixtureBase(), compileContract(FIXTURE));
    expect(findings).toEqual([]);
  });

  for (const c of cases) {
    it(`${RULES[c.rule]?.kind ?? '?'} [${c.rule}]: ${c.name}`, () => {
      const dir = mutate(c.edits);
      const findings = diffContracts(fixtureBase(), compileContract(dir));
      const hit = findings.find((f) => f.rule === c.rule && f.subject === c.subject);
      expect(hit, `no ${c.rule} for ${c.subject} in:\n${findings.map((f) => `${f.rule} ${f.subject} ${f.location}`).join('\n')}`).toBeDefined();
      const f = hit as Finding;
      expect(f.kind).toBe(RULES[c.rule].kind);
      expect(f.location).toBe(c.at(dir));
      expect(f.message.length).toBeGreaterThan(10);
      // An additive mutation produces nothing breaking beside it.
      if (RULES[c.rule].kind === 'additive') expect(findings.filter((x) => x.kind === 'breaking')).toEqual([]);
    });
  }

  it('reports a change to a shared schema once, naming the operations that use it', () => {
    const dir = mutate({ [S]: [['enum: [memo, call, email]', 'enum: [memo, call, email, sms]']] });
    const findings = diffContracts(fixtureBase(), compileContract(dir));
    expect(findings).toHaveLength(1);
    expect(findings[0].message).toContain('used by notes.archive, notes.create, notes.list');
  });
});

describe('what each classification requires', () => {
  const addField: Edits = { [N]: [['        reason: { type: string, maxLength: 500 }\n', '        reason: { type: string, maxLength: 500 }\n        color: { type: string }\n']] };
  const entry = `changelog:\n  - version: 1.1.0\n    date: "2026-12-01"\n    added: [notes.archive takes an optional color.]\n    deprecated: []\n    removed: []\n`;

  it('no difference: exit 0 with a one-line summary', () => {
    const v = verdict(fixtureBase(), compileContract(FIXTURE), []);
    expect(v.exitCode).toBe(0);
    expect(v.lines).toHaveLength(1);
    expect(v.lines[0]).toMatch(/no contract changes/);
  });

  it('an additive change without a raised minor fails with the exact fix', () => {
    const dir = mutate(addField);
    const head = compileContract(dir);
    const v = verdict(fixtureBase(), head, diffContracts(fixtureBase(), head));
    expect(v.exitCode).toBe(1);
    const text = v.lines.join('\n');
    expect(text).toContain(`${loc(dir, SVC, 'version: 1.0.0')} says 1.0.0`);
    expect(text).toContain('Set info.version: 1.1.0');
    expect(text).toContain('  - version: 1.1.0');
  });

  it('an additive change with the minor raised but no changelog entry fails', () => {
    const dir = mutate({ ...addField, [SVC]: [['  version: 1.0.0', '  version: 1.1.0']] });
    const head = compileContract(dir);
    const v = verdict(fixtureBase(), head, diffContracts(fixtureBase(), head));
    expect(v.exitCode).toBe(1);
    expect(v.lines.join('\n')).toContain('there is no changelog entry for 1.1.0');
    expect(v.lines.join('\n')).not.toContain('Set info.version');
  });

  it('an additive change with the minor raised and a changelog entry passes', () => {
    const dir = mutate({ ...addField, [SVC]: [['  version: 1.0.0', '  version: 1.1.0'], ['changelog:\n', entry]] });
    const head = compileContract(dir);
    const findings = diffContracts(fixtureBase(), head);
    expect(findings.map((f) => f.rule)).toEqual(['input-field-added']);
    const v = verdict(fixtureBase(), head, findings);
    expect(v.exitCode).toBe(0);
    expect(v.lines.at(-1)).toMatch(/1 additive change/);
  });

  it('a breaking change fails even with a raised version, spelling out /v2 beside /v1', () => {
    const dir = mutate({ [S]: [['maxLength: 5000', 'maxLength: 2000']], [SVC]: [['  version: 1.0.0', '  version: 1.1.0'], ['changelog:\n', entry]] });
    const head = compileContract(dir);
    const v = verdict(fixtureBase(), head, diffContracts(fixtureBase(), head));
    expect(v.exitCode).toBe(1);
    const text = v.lines.join('\n');
    expect(text).toContain('breaking [input-length-narrowed] NoteBase');
    expect(text).toContain('/v2 beside');
    expect(text).toMatch(/deprecated: \{since, sunset, link, successor, successorLink\}/);
  });
});

/** A release as format 1 recorded it: no personalData member, no features (snapshot.ts SNAPSHOT_FORMAT). */
function asFormatOne(side: ReturnType<typeof compileContract>): ReturnType<typeof compileContract> {
  const { personalData: _p, features: _f, ...service } = side.snapshot.service;
  return { ...side, snapshot: { ...side.snapshot, snapshotFormat: 1, service: service as typeof side.snapshot.service } };
}

// svc.yaml personalData (docs/decisions.md, "Personal data's scope"): a format-1 release (from before
// the member existed, when the runtime fixed pii:read) cannot say it had none, so declaring one is not
// reported against it; against a release that records it, adding, changing or dropping it is breaking.
describe('personalData.scope', () => {
  const declare = (scope: string): Edits => ({ [SVC]: [[/^info:/m, `personalData: { scope: ${scope} }\ninfo:`]] });

  it('declared where a format-1 base has no member: nothing reported', () => {
    expect(diffContracts(asFormatOne(fixtureBase()), compileContract(mutate(declare('pii:read'))))).toEqual([]);
  });

  it('declared where a release recording none had none: breaking, at the head scope', () => {
    expect(fixtureBase().snapshot.service.personalData).toBeNull();
    const added = mutate(declare('pii:read'));
    const [f, ...rest] = diffContracts(fixtureBase(), compileContract(added));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ rule: 'personal-data-scope-changed', kind: 'breaking', location: loc(added, SVC, 'scope: pii:read') });
    expect(f!.message).toContain('no scope gated personal data; now credentials without pii:read lose personal data');
  });

  it('changed: breaking, at the head scope; removed: breaking, at the base member', () => {
    const withPii = mutate(declare('pii:read'));
    const changed = mutate(declare('audit:read'));
    const [f] = diffContracts(compileContract(withPii), compileContract(changed));
    expect(f).toMatchObject({ rule: 'personal-data-scope-changed', kind: 'breaking', subject: 'personalData', location: loc(changed, SVC, 'scope: audit:read') });
    const [g] = diffContracts(compileContract(withPii), fixtureBase());
    expect(g).toMatchObject({ rule: 'personal-data-scope-changed', kind: 'breaking', location: loc(withPii, SVC, 'personalData:') });
    expect(g!.message).toContain('no scope gates personal data any more');
  });
});

// svc.yaml features: turning one on or off changes who is served, what a credential reaches or what a
// command answers. A format-1 release has no features member: nothing is compared. (The minimal
// contract: no Tier 2 command and no client principal, so each feature can be on or off.)
describe('features', () => {
  const MINIMAL = 'test/fixtures/minimal-contract';
  const turnOn = (name: string): Edits => ({ [SVC]: [[/^info:/m, `features: { ${name}: true }\ninfo:`]] });
  const off = () => compileContract(mutate({}, MINIMAL));

  it('approvals or clientTenancy turned on: breaking, at the head; turned off: breaking, at the base', () => {
    const on = mutate(turnOn('approvals'), MINIMAL);
    const [f, ...rest] = diffContracts(off(), compileContract(on));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ rule: 'feature-changed', kind: 'breaking', subject: 'features.approvals', location: loc(on, SVC, 'approvals: true') });
    expect(f!.message).toBe('svc.yaml features.approvals turned on: Tier 2 and 3 commands answer 202 proposed and wait for a person.');
    const tenancy = mutate(turnOn('clientTenancy'), MINIMAL);
    const [g, ...more] = diffContracts(compileContract(tenancy), off());
    expect(more).toEqual([]);
    expect(g).toMatchObject({ rule: 'feature-changed', kind: 'breaking', subject: 'features.clientTenancy', location: loc(tenancy, SVC, 'clientTenancy: true') });
    expect(g!.message).toContain('turned off');
  });

  it('a base without the features member (format 1) compares nothing', () => {
    expect(diffContracts(asFormatOne(off()), compileContract(mutate(turnOn('approvals'), MINIMAL)))).toEqual([]);
  });
});
