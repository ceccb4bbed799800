// The names svc puts on a contract's surface come from the contract: svc.yaml mcpToolPrefix names the
// operation tools (<prefix>.<operation id>) and apiVersionHeader the response header carrying the API
// version. Undeclared, they are today's (svc., X-Svc-Api-Version) and the generated facts do not
// mention them (generated/ stays byte-identical); declared, the tools, the docs and the service facts
// the runtime reads (registry.ts service) carry them, and the runtime's tool table takes the tools
// whatever their prefix.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileWithModel } from '../../generator/generate.ts';
import { ContractError } from '../../generator/source.ts';
import { DEFAULT_API_VERSION_HEADER, DEFAULT_MCP_TOOL_PREFIX } from '../../runtime/contract-types.ts';
import { buildToolTable } from '../../runtime/mcp/index.ts';
import { searchDocument } from '../../runtime/mcp/dynamic.ts';
import { tempDir } from './helpers.ts';

const FIXTURE = 'test/fixtures/minimal-contract';
const tmp = tempDir('names');
afterAll(() => tmp.cleanup());

/** A copy of the fixture with `lines` added to svc.yaml; its directory. */
function fixtureWith(lines: string): string {
  const dir = path.join(tmp.dir, `contract-${Math.random().toString(36).slice(2)}`);
  cpSync(FIXTURE, dir, { recursive: true });
  const file = path.join(dir, 'svc.yaml');
  writeFileSync(file, `${readFileSync(file, 'utf8')}\n${lines}\n`);
  return dir;
}

const text = (files: Map<string, unknown>, rel: string) => String(files.get(rel));

describe('mcpToolPrefix and apiVersionHeader', () => {
  it('default to svc and X-Svc-Api-Version, which the generated facts do not spell out', async () => {
    expect([DEFAULT_MCP_TOOL_PREFIX, DEFAULT_API_VERSION_HEADER]).toEqual(['svc', 'X-Svc-Api-Version']);
    const { files, model } = await compileWithModel(FIXTURE);
    expect(model.operations.map((o) => o.def.mcp?.name)).toEqual(['svc.notes.create', 'svc.notes.get', 'svc.notes.list']);
    expect(model.service).not.toHaveProperty('mcpToolPrefix');
    expect(model.service).not.toHaveProperty('apiVersionHeader');
    expect(text(files, 'registry.ts')).not.toContain('apiVersionHeader');
    expect(text(files, 'docs/agent-guide.md')).toContain('`X-Svc-Api-Version: 0.1`');
  });

  it('declared, name the tools, the docs and the service facts', async () => {
    const dir = fixtureWith('mcpToolPrefix: notes_api\napiVersionHeader: X-Notes-Api-Version');
    const { files, model } = await compileWithModel(dir);
    expect(model.operations.map((o) => o.def.mcp?.name)).toEqual(['notes_api.notes.create', 'notes_api.notes.get', 'notes_api.notes.list']);
    expect(model.service).toMatchObject({ mcpToolPrefix: 'notes_api', apiVersionHeader: 'X-Notes-Api-Version' });
    const registry = text(files, 'registry.ts');
    expect(registry).toContain('"apiVersionHeader": "X-Notes-Api-Version",');
    expect(registry).toContain('"mcpToolPrefix": "notes_api",');
    expect(registry).toContain('"name": "notes_api.notes.get"');
    expect(registry).not.toContain('"svc.notes');
    const guide = text(files, 'docs/agent-guide.md');
    expect(guide).toContain('`X-Notes-Api-Version: 0.1`');
    expect(guide).toContain('`notes_api.<operation id>`');
    expect(guide).not.toContain('X-Svc-Api-Version');
    expect(text(files, 'docs/guides/mcp.md')).toContain("name: 'notes_api.notes.list'");
    expect(text(files, 'CHANGELOG.md')).toContain('(sent as `X-Notes-Api-Version`)');

    // The runtime's tool table and search read the tools as generated, whatever the prefix.
    const operationsById = Object.fromEntries(model.operations.map((o) => [o.def.id, o.def]));
    const table = buildToolTable(model.operations.map((o) => o.def.mcp!), operationsById, true);
    expect(table.byName.get('notes_api.notes.get')?.op.id).toBe('notes.get');
    expect(table.byName.get('notes_api_notes_get')?.alias).toBe(true);
    expect(searchDocument(table.byName.get('notes_api.notes.list')!, {}).fields.map((f) => f.text)).toContain('notes.list');
  });

  it.each([
    ['mcpToolPrefix: acme.api', 'mcpToolPrefix'],
    ['apiVersionHeader: "X Api Version"', 'apiVersionHeader'],
  ])('refuses a malformed value (%s) where it is written', async (line, key) => {
    const dir = fixtureWith(line);
    const err = await compileWithModel(dir).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContractError);
    const message = (err as ContractError).message;
    expect(message).toContain('svc.yaml:');
    expect(message).toContain(key);
  });
});
