// The folder import graph runs one way (issue 8): bin/ wires {handlers, runtime, generated};
// handlers/ imports {runtime, generated}; runtime/ imports nothing of them (issue 42: it knows no
// contract; every contract fact reaches it in the registry, runtime/contract-facts.ts). Static imports, re-exports
// and dynamic import() calls are all read with the TypeScript scanner's preprocessor, so a comment
// or a string that merely mentions a path does not count.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(rel));
    else if (/\.(ts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The top-level folder each relative import of a file lands in. */
function importedFolders(file: string): { specifier: string; folder: string }[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith('.'))
    .map((specifier) => ({ specifier, folder: relative(ROOT, resolve(ROOT, dirname(file), specifier)).split(/[\\/]/)[0]! }));
}

const RULES: { from: string; allowed: string[] }[] = [
  { from: 'runtime', allowed: ['runtime'] },
  { from: 'handlers', allowed: ['handlers', 'runtime', 'generated'] },
];

describe('the folder import graph', () => {
  for (const rule of RULES) {
    it(`${rule.from}/ imports only ${rule.allowed.join(', ')}`, () => {
      const files = sources(rule.from);
      expect(files.length).toBeGreaterThan(5);
      const offending = files.flatMap((file) =>
        importedFolders(file)
          .filter((i) => !rule.allowed.includes(i.folder))
          .map((i) => `${file} imports ${i.specifier}`),
      );
      expect(offending).toEqual([]);
    });
  }

  it('sees a forbidden import when there is one (the scanner reads dynamic imports too)', () => {
    const info = ts.preProcessFile("const m = await import('../handlers/x.ts'); // '../bin/y.ts'\nimport a from './b.ts';", true, true);
    expect(info.importedFiles.map((f) => f.fileName)).toEqual(['../handlers/x.ts', './b.ts']);
  });
});

// runtime/data/schema.ts holds the machinery's tables only (docs/layout.md): each of its tables is
// imported by name by some other runtime/ module, so a table that only an API's handlers use (a
// domain table) cannot land there again. The API's tables are its own (handlers/data/schema.ts).
describe("runtime/data/schema.ts holds only the runtime's machinery", () => {
  it('every table of it is used by runtime/ code', async () => {
    const { getTableName, is } = await import('drizzle-orm');
    const { PgTable } = await import('drizzle-orm/pg-core');
    const schema = (await import('../../runtime/data/schema.ts')) as Record<string, unknown>;
    const tables = Object.entries(schema).filter(([, v]) => is(v, PgTable));
    expect(tables.length).toBeGreaterThan(10);
    const used = new Set<string>();
    for (const file of sources('runtime')) {
      if (file === join('runtime', 'data', 'schema.ts')) continue;
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'[./]*(?:data\/)?schema\.ts'/g)) {
        for (const name of m[1]!.split(',')) used.add(name.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!);
      }
    }
    const unused = tables.filter(([name]) => !used.has(name)).map(([name, t]) => `${name} (${getTableName(t as never)})`);
    expect(unused).toEqual([]);
  });

  it("no runtime table points at an API's table: the links live in the domain's tables, and the migration history has their keys", async () => {
    const { getTableName, is } = await import('drizzle-orm');
    const { getTableConfig, PgTable } = await import('drizzle-orm/pg-core');
    const runtime = Object.values(await import('../../runtime/data/schema.ts')).filter((v) => is(v, PgTable));
    const own = new Set<string>(runtime.map((t) => getTableName(t as never)));
    const outside = runtime.flatMap((t) => getTableConfig(t as never).foreignKeys.map((k): string => getTableName(k.reference().foreignTable))).filter((n) => !own.has(n));
    expect(outside).toEqual([]);
    const { fileLinks, campaignMessages } = await import('../../handlers/data/schema.ts');
    const links = [fileLinks, campaignMessages].flatMap((t) => getTableConfig(t).foreignKeys.map((k) => k.getName()));
    expect(links).toEqual(expect.arrayContaining(['file_links_file_id_files_id_fk', 'file_links_project_id_projects_id_fk', 'campaign_messages_message_id_outbound_messages_id_fk']));
    const folder = join(ROOT, 'handlers', 'data', 'migrations');
    const history = readdirSync(folder).filter((f) => f.endsWith('.sql')).map((f) => readFileSync(join(folder, f), 'utf8')).join('\n');
    for (const link of links) expect(history).toContain(`ADD CONSTRAINT "${link}"`);
  });
});

describe("this repository's folders are named once", () => {
  it('bin/paths.ts (what svc serve of the Platform API opens) names the folders svc.config.json names', async () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'svc.config.json'), 'utf8')) as { migrations: string; generated: string };
    const { MIGRATIONS_FOLDER, GENERATED_DIR } = await import('../../bin/paths.ts');
    expect(relative(ROOT, MIGRATIONS_FOLDER)).toBe(config.migrations);
    expect(relative(ROOT, GENERATED_DIR)).toBe(config.generated);
  });
});
