// `svc init`'s template and what init writes, without npm (test/e2e/init-project.test.ts installs,
// tests and serves a project): the template's one migration history is what drizzle-kit makes of the
// runtime's machinery schema plus the template's table (regenerating adds nothing); init refuses a
// non-empty directory; a project's generated/wiring.ts imports its handlers where svc.config.json says;
// package.json names every package the generated code imports.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SVC_BIN } from '../support/process.ts';
import { tempDir } from './helpers.ts';
import { bareImports } from '../../generator/init.ts';

const tmp = tempDir('init-template');
afterAll(() => tmp.cleanup());

function svc(cwd: string, ...args: string[]) {
  return spawnSync(process.execPath, [SVC_BIN, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
}

describe('the init template', () => {
  it("its migration history is drizzle-kit's of the machinery schema and the template's tables: regenerating adds nothing", () => {
    // A copy of the history, so that a change drizzle-kit would write lands in the copy, not the repository.
    const out = path.join(tmp.dir, 'migrations');
    cpSync('project-template/handlers/data/migrations', out, { recursive: true });
    const config = path.join(process.cwd(), 'drizzle.init-check.config.ts');
    const text = readFileSync('drizzle.project-template.config.ts', 'utf8').replace("out: './project-template/handlers/data/migrations'", `out: ${JSON.stringify(path.relative(process.cwd(), out))}`);
    // drizzle-kit reads `out` relative to the working directory (it prefixes ./), and exits 0 on its own errors: the output says.
    expect(text).toContain(path.relative(process.cwd(), out));
    writeFileSync(config, text);
    try {
      const run = spawnSync('npx', ['drizzle-kit', 'generate', '--config', config], { encoding: 'utf8', timeout: 120_000 });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain('No schema changes');
    } finally {
      rmSync(config, { force: true });
    }
    expect(readdirSync(out).sort()).toEqual(readdirSync('project-template/handlers/data/migrations').sort());
  }, 120_000);

  it('svc init refuses a non-empty directory and writes nothing there', () => {
    const dir = path.join(tmp.dir, 'taken');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    const run = svc(tmp.dir, 'init', dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('is not empty; nothing was written');
    expect(readdirSync(dir)).toEqual(['notes.txt']);
  });

  it('svc init DIR --no-lock writes the project: config, contract, handlers, migration, generated/ with its wiring, package.json', () => {
    const dir = path.join(tmp.dir, 'notes-api');
    const run = svc(tmp.dir, 'init', dir, '--no-lock');
    expect(run.status, run.stderr).toBe(0);
    const files = readdirSync(dir, { recursive: true }).map(String);
    for (const f of ['svc.config.json', 'contract/svc.yaml', 'contract/families/notes.yaml', 'contract/releases/0.1.0.json', 'handlers/index.ts', 'handlers/notes.ts', 'handlers/data/schema.ts', 'handlers/data/migrations/0000_init.sql', 'generated/wiring.ts', 'generated/openapi.json', 'test/api.test.ts', 'README.md', '.gitignore', 'package.json']) {
      expect(files).toContain(f);
    }
    expect(readFileSync(path.join(dir, 'generated/wiring.ts'), 'utf8')).toContain("import * as project from '../handlers/index.ts';");
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(pkg.dependencies.svc).toBe(`file:${process.cwd()}`);
    for (const name of bareImports(path.join(dir, 'generated'))) expect(pkg.dependencies[name], name).toBeDefined();
    expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(['ajv', 'drizzle-orm']));
    // The project's own svc generate --check (through its svc.config.json, from a subdirectory) agrees with what init wrote.
    const check = svc(path.join(dir, 'handlers'), 'generate', '--check');
    expect(check.status, check.stdout + check.stderr).toBe(0);
  }, 120_000);

  it('a project whose handlers live elsewhere gets a wiring module importing them from there', () => {
    const dir = path.join(tmp.dir, 'moved');
    cpSync('test/fixtures/minimal-contract', path.join(dir, 'api/contract'), { recursive: true });
    writeFileSync(path.join(dir, 'svc.config.json'), JSON.stringify({ contract: 'api/contract', generated: 'build/generated', handlers: 'src/handlers' }));
    const run = svc(path.join(dir, 'api'), 'generate');
    expect(run.status, run.stderr).toBe(0);
    expect(readFileSync(path.join(dir, 'build/generated/wiring.ts'), 'utf8')).toContain("import * as project from '../../src/handlers/index.ts';");
    // The handlers were scaffolded into the configured directory.
    expect(readdirSync(path.join(dir, 'src/handlers')).sort()).toEqual(['index.ts', 'notes.ts']);
  }, 120_000);
});

