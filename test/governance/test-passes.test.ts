// The CI passes of test/passes.ts stay true (docs/testing.md, "CI"): every file they name exists;
// every test file is either in the PostgreSQL pass or named (by itself or its folder) among those CI
// leaves to PGlite, never both, so a new test file must be placed; the serial files of PostgreSQL
// are files of that pass; docs/testing.md names every file of every list; and the scripts that run
// the passes select them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE24, POSTGRES, POSTGRES_FULL_ONLY, SERIAL, SERIAL_ON_POSTGRES } from '../passes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

function testFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(`${dir}/${e.name}`) : e.name.endsWith('.test.ts') ? [`${dir}/${e.name}`] : [],
  );
}

const all = testFiles('test');
const lists = { SERIAL, SERIAL_ON_POSTGRES, POSTGRES, NODE24 };

describe('test/passes.ts', () => {
  it('names only test files that exist, each with a reason', () => {
    for (const [name, list] of Object.entries(lists)) {
      for (const [file, reason] of Object.entries(list)) {
        expect(existsSync(path.join(ROOT, file)), `${name}: ${file}`).toBe(true);
        expect(file, name).toMatch(/\.test\.ts$/);
        expect(reason.length, `${name}: ${file}`).toBeGreaterThan(10);
      }
    }
    for (const entry of Object.keys(POSTGRES_FULL_ONLY)) expect(existsSync(path.join(ROOT, entry)), entry).toBe(true);
  });

  it('places every test file once: in the PostgreSQL pass, or among the files CI leaves to PGlite', () => {
    const leftToPglite = (file: string) => Object.keys(POSTGRES_FULL_ONLY).filter((e) => (e.endsWith('/') ? file.startsWith(e) : file === e));
    const unplaced = all.filter((f) => !(f in POSTGRES) && leftToPglite(f).length === 0);
    const twice = all.filter((f) => (f in POSTGRES ? 1 : 0) + leftToPglite(f).length > 1);
    expect(unplaced, 'add each to POSTGRES or POSTGRES_FULL_ONLY in test/passes.ts').toEqual([]);
    expect(twice).toEqual([]);
  });

  it('runs alone on PostgreSQL only files of the PostgreSQL pass, and lists no file as serial twice', () => {
    for (const file of Object.keys(SERIAL_ON_POSTGRES)) {
      expect(POSTGRES, file).toHaveProperty([file]);
      expect(SERIAL, file).not.toHaveProperty([file]);
    }
  });

  it('docs/testing.md names every file of every list', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/testing.md'), 'utf8');
    for (const [name, list] of Object.entries({ ...lists, POSTGRES_FULL_ONLY })) {
      for (const file of Object.keys(list)) expect(doc, `${name}: ${file}`).toContain(`\`${file.replace(/^test\//, '')}\``);
    }
  });

  it('the scripts select the passes, and .ci/run runs the three and the MCP conformance suite', () => {
    const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
    expect(scripts['test:db']).toBe('SVC_TEST_PASS=postgres vitest run');
    expect(scripts['test:node24']).toBe('SVC_TEST_PASS=node24 vitest run');
    expect(scripts['test:full']).toBe('bash scripts/test-full.sh');
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    for (const command of ['npm test', 'npm run test:db', 'npm run test:node24', 'npm run conformance', 'npm run bench:compiler']) expect(ci).toContain(command);
    // The MCP conformance suite (issue 42) runs in CI and in test:full.
    expect(scripts.conformance).toBe('node --import tsx scripts/mcp-conformance.ts');
    expect(readFileSync(path.join(ROOT, 'scripts/test-full.sh'), 'utf8')).toContain('npm run conformance');
    expect(ci).not.toContain('npm run bench -- --quick');
  });
});
