// Deprecation on a fixture contract (test/fixtures/governance/deprecated-contract): the generator-side
// rules, the headers' exact format, GET /v1/meta's view, OpenAPI `deprecated: true`, the changelog.
import { afterAll, describe, expect, it } from 'vitest';
import { renderChangelog } from '../../generator/governance/changelog.ts';
import { checkDeprecations, deprecationHeaders, metaDeprecations } from '../../generator/governance/deprecation.ts';
import { diffContracts, verdict } from '../../generator/governance/diff.ts';
import { compileContract } from '../../generator/governance/snapshot.ts';
import { emitAll } from '../../generator/emit/index.ts';
import { loadContract } from '../../generator/load.ts';
import { buildModel } from '../../generator/model.ts';
import { ContractError, formatDiagnostic } from '../../generator/source.ts';
import { cleanupCopies, fixtureBase, loc, mutate } from './helpers.ts';

afterAll(cleanupCopies);

const DEP = 'test/fixtures/governance/deprecated-contract';
const N = 'families/notes.yaml';

describe('the deprecated fixture contract', () => {
  const model = buildModel(loadContract(DEP));
  const notesList = model.operations.find((o) => o.def.id === 'notes.list')!.def;

  it('compiles, with the deprecation on the registry entry', () => {
    expect(checkDeprecations(loadContract(DEP))).toEqual([]);
    expect(notesList.deprecated).toEqual({
      since: '2027-01-01T00:00:00Z',
      sunset: '2027-09-01T00:00:00Z',
      link: 'https://example.com/notices/notes-list',
      successor: 'notes.v2.list',
      successorLink: 'https://api.example.com/v2/notes',
    });
    expect(compileContract(DEP).snapshot.operations['notes.list'].def.deprecated?.successor).toBe('notes.v2.list');
  });

  it('answers with Deprecation (RFC 9745), Sunset (RFC 8594) and two Link headers', () => {
    expect(deprecationHeaders(notesList.deprecated!)).toEqual({
      Deprecation: '@1798761600',
      Sunset: 'Wed, 01 Sep 2027 00:00:00 GMT',
      Link: ['<https://example.com/notices/notes-list>; rel="deprecation"', '<https://api.example.com/v2/notes>; rel="successor-version"'],
    });
  });

  it('lists it in GET /v1/meta deprecations and versions[].sunset', () => {
    const view = metaDeprecations(
      model.operations.map((o) => o.def),
      model.service,
    );
    expect(view.deprecations).toEqual([
      { target: 'notes.list', deprecatedAt: '2027-01-01T00:00:00Z', sunset: 'Wed, 01 Sep 2027 00:00:00 GMT', link: 'https://example.com/notices/notes-list', successor: 'notes.v2.list' },
    ]);
    expect(view.versions).toEqual([
      { version: 'v1', status: 'deprecated', sunset: 'Wed, 01 Sep 2027 00:00:00 GMT' },
      { version: 'v2', status: 'current', sunset: null },
    ]);
  });

  it('lists a deprecated version too when its entry carries since, link and successor', () => {
    const view = metaDeprecations([], {
      versions: [
        { version: 'v1', status: 'deprecated', since: '2027-01-01T00:00:00Z', sunset: '2027-09-01T00:00:00Z', link: 'https://example.com/notices/v1', successor: 'v2', successorLink: 'https://api.example.com/v2' },
        { version: 'v2', status: 'current', sunset: null },
      ],
    });
    expect(view.deprecations).toEqual([{ target: 'v1', deprecatedAt: '2027-01-01T00:00:00Z', sunset: 'Wed, 01 Sep 2027 00:00:00 GMT', link: 'https://example.com/notices/v1', successor: 'v2' }]);
  });

  it('is empty for 1.0.0, which deprecates nothing', () => {
    const real = buildModel(loadContract('contract'));
    const view = metaDeprecations(
      real.operations.map((o) => o.def),
      real.service,
    );
    expect(view.deprecations).toEqual([]);
    expect(view.versions).toEqual([{ version: 'v1', status: 'current', sunset: null }]);
  });

  it('marks the operation deprecated: true in the OpenAPI document, and only it', async () => {
    const files = await emitAll(model);
    const doc = JSON.parse(files.get('openapi.json')!);
    const ops: { operationId: string; deprecated?: boolean }[] = [];
    for (const item of Object.values(doc.paths as Record<string, Record<string, { operationId: string; deprecated?: boolean }>>))
      for (const op of Object.values(item)) if (op && typeof op === 'object' && 'operationId' in op) ops.push(op);
    expect(ops.filter((o) => o.deprecated === true).map((o) => o.operationId)).toEqual(['notes.list']);
  });

  it('renders the changelog with the deprecation under Deprecated, newest release first', () => {
    const md = renderChangelog(model);
    expect(md.split('\n')[0]).toMatch(/^<!-- .*generated.*contract\/svc\.yaml.* -->$/i);
    expect(md.indexOf('## 1.1.0 (2027-01-01)')).toBeLessThan(md.indexOf('## 1.0.0'));
    const release = md.slice(md.indexOf('## 1.1.0'), md.indexOf('## 1.0.0'));
    expect(release).toContain('### Added\n- notes.v2.list: GET /v2/notes, the notes list of /v2.');
    expect(release).toContain('### Deprecated\n- notes.list (GET /v1/notes): use notes.v2.list; sunset 2027-09-01.\n- /v1: use /v2; sunset 2027-09-01.');
    expect(release).toContain('### Removed\n- Nothing.');
    expect(renderChangelog(model)).toBe(md);
  });

  it('is an additive change against the fixture that passes with its changelog entry', () => {
    const head = compileContract(DEP);
    const findings = diffContracts(fixtureBase(), head);
    expect(findings.map((f) => `${f.kind} ${f.rule} ${f.subject}`).sort()).toEqual([
      'additive operation-added notes.v2.list',
      'additive operation-deprecated notes.list',
      'additive version-deprecated v1',
    ]);
    expect(findings.find((f) => f.rule === 'operation-deprecated')!.location).toBe(loc(DEP, N, 'deprecated:'));
    expect(verdict(fixtureBase(), head, findings).exitCode).toBe(0);
  });

  it('needs the deprecation announced under deprecated in the changelog', () => {
    const dir = mutate({ 'svc.yaml': [[/deprecated: \["notes\.list.*\]\n/, 'deprecated: []\n']] }, DEP);
    const head = compileContract(dir);
    const v = verdict(fixtureBase(), head, diffContracts(fixtureBase(), head));
    expect(v.exitCode).toBe(1);
    expect(v.lines.join('\n')).toContain('its deprecated list is empty');
  });
});

describe('deprecation rules the generator enforces', () => {
  const errorsOf = (dir: string) => {
    try {
      compileContract(dir);
    } catch (err) {
      if (err instanceof ContractError) return err.diagnostics;
      throw err;
    }
    return [];
  };

  it('refuses a sunset earlier than the deprecation, at the sunset', () => {
    const dir = mutate({ [N]: [['      sunset: "2027-09-01T00:00:00Z"', '      sunset: "2026-12-01T00:00:00Z"']] }, DEP);
    const errors = errorsOf(dir).filter((d) => d.rule === 'sunset-before-deprecation');
    expect(errors).toHaveLength(1);
    expect(`${errors[0].file}:${errors[0].line}:${errors[0].col}`).toBe(loc(dir, N, '"2026-12-01'));
    expect(formatDiagnostic(errors[0])).toMatch(/error \[sunset-before-deprecation\] operation notes\.list sets sunset 2026-12-01T00:00:00Z before its deprecation/);
  });

  it('refuses an operation sunset less than six months after its successor major ships', () => {
    const dir = mutate({ [N]: [['      sunset: "2027-09-01T00:00:00Z"', '      sunset: "2027-05-01T00:00:00Z"']] }, DEP);
    const errors = errorsOf(dir).filter((d) => d.rule === 'sunset-too-soon');
    expect(errors).toHaveLength(1);
    expect(`${errors[0].file}:${errors[0].line}:${errors[0].col}`).toBe(loc(dir, N, '"2027-05-01'));
    expect(errors[0].message).toContain('less than 6 months (limits.priorMajorMinimumMonths) after v2 ships (2027-01-01T00:00:00Z)');
    expect(errors[0].message).toContain('set sunset to 2027-07-01T00:00:00Z or later');
  });

  it('refuses a version sunset less than six months after the successor major ships', () => {
    const dir = mutate({ 'svc.yaml': [['    sunset: "2027-09-01T00:00:00Z"', '    sunset: "2027-03-01T00:00:00Z"']] }, DEP);
    const errors = errorsOf(dir).filter((d) => d.rule === 'sunset-too-soon');
    expect(errors).toHaveLength(1);
    expect(`${errors[0].file}:${errors[0].line}:${errors[0].col}`).toBe(loc(dir, 'svc.yaml', '"2027-03-01'));
    expect(errors[0].message).toMatch(/^version v1 sets sunset/);
  });

  it('honours limits.priorMajorMinimumMonths', () => {
    const dir = mutate({ 'svc.yaml': [['priorMajorMinimumMonths: 6', 'priorMajorMinimumMonths: 12']] }, DEP);
    expect(errorsOf(dir).filter((d) => d.rule === 'sunset-too-soon')).toHaveLength(2);
  });

  it('names missing fields and unknown successors', () => {
    const dir = mutate({ [N]: [['      link: https://example.com/notices/notes-list\n', ''], ['successor: notes.v2.list', 'successor: notes.v3.list']] }, DEP);
    const rules = errorsOf(dir).map((d) => d.rule).sort();
    expect(rules).toEqual(['deprecation-incomplete', 'unknown-successor']);
  });
});
