// The content-hash cache of svc generate --check (generator/cache.ts): a hit proves generated/ up to
// date without compiling; no edit of an input (a contract file, the compiler's code or templates, a
// runtime module the compiler imports) can be answered from a stale entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compilerFingerprint, entryFile, inputsKey, provenUpToDate, readEntry } from '../../generator/cache.ts';
import { SVC_BIN } from '../support/process.ts';
import { ContractCopy, tempDir } from './helpers.ts';

const svc = (...args: string[]) => spawnSync(process.execPath, [SVC_BIN, ...args], { encoding: 'utf8', env: { ...process.env, SVC_NO_CACHE: '' } });

describe('svc generate --check and its cache', () => {
  let copy: ContractCopy;
  let out: ReturnType<typeof tempDir>;
  beforeAll(() => {
    copy = new ContractCopy();
    out = tempDir('cache-out');
    execFileSync(process.execPath, [SVC_BIN, 'generate', '--contract', copy.dir, '--out', out.dir], { encoding: 'utf8', stdio: 'pipe' });
  }, 120_000);
  afterAll(() => {
    rmSync(entryFile(copy.dir), { force: true });
    copy.cleanup();
    out.cleanup();
  });

  it('records what generate wrote, and proves it on --check without compiling', () => {
    const entry = readEntry(copy.dir);
    expect(entry?.key).toBe(inputsKey(copy.dir));
    expect(Object.keys(entry!.outputs)).toContain('openapi.json');
    expect(provenUpToDate(copy.dir, out.dir)).toBe(true);
    const run = svc('generate', '--check', '--contract', copy.dir, '--out', out.dir);
    expect(run.status, run.stderr).toBe(0);
  });

  it('is not fooled by an edited generated file', () => {
    const file = path.join(out.dir, 'registry.ts');
    const before = readFileSync(file, 'utf8');
    appendFileSync(file, '// edited\n');
    try {
      expect(provenUpToDate(copy.dir, out.dir)).toBe(false);
      const run = svc('generate', '--check', '--contract', copy.dir, '--out', out.dir);
      expect(run.status).toBe(1);
      expect(run.stdout).toContain('registry.ts');
    } finally {
      writeFileSync(file, before);
    }
  }, 120_000);

  it('misses on an edited contract file: --check compiles and reports the change', () => {
    const key = inputsKey(copy.dir);
    copy.mutate('families/tasks.yaml', 'description:', 'Work items', 'Work items (edited)');
    expect(inputsKey(copy.dir)).not.toBe(key);
    expect(provenUpToDate(copy.dir, out.dir)).toBe(false);
    const run = svc('generate', '--check', '--contract', copy.dir, '--out', out.dir);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('Work items (edited)');
    // The failed check recorded the new inputs' outputs; generated/ still differs, so still not proven.
    expect(readEntry(copy.dir)?.key).toBe(inputsKey(copy.dir));
    expect(provenUpToDate(copy.dir, out.dir)).toBe(false);
  }, 120_000);
});

describe("the compiler's fingerprint", () => {
  const root = tempDir('compiler-root');
  beforeAll(() => {
    for (const dir of ['generator', 'runtime']) cpSync(path.resolve(dir), path.join(root.dir, dir), { recursive: true });
    cpSync(path.resolve('package-lock.json'), path.join(root.dir, 'package-lock.json'));
  });
  afterAll(() => root.cleanup());

  const edit = (rel: string) => {
    const file = path.join(root.dir, rel);
    if (!existsSync(path.dirname(file))) mkdirSync(path.dirname(file), { recursive: true });
    appendFileSync(file, '\n// edited\n');
  };

  it('changes with an emitter, a template, the contract format, a runtime module the compiler imports, the lockfile', () => {
    for (const rel of ['generator/emit/routes.ts', 'generator/templates/llms.txt.hbs', 'generator/contract-format/validators.generated.js', 'generator/mcp-dynamic.ts', 'runtime/http/route-path.ts', 'package-lock.json']) {
      const before = compilerFingerprint(root.dir);
      edit(rel);
      expect(compilerFingerprint(root.dir), rel).not.toBe(before);
    }
  });

  it('does not change with a runtime module the compiler never imports', () => {
    const before = compilerFingerprint(root.dir);
    edit('runtime/never-imported-by-the-compiler.ts');
    expect(compilerFingerprint(root.dir)).toBe(before);
  });

  it('is part of the key: an entry recorded by another compiler proves nothing', () => {
    const copy = new ContractCopy();
    try {
      expect(inputsKey(copy.dir, compilerFingerprint(root.dir))).not.toBe(inputsKey(copy.dir));
    } finally {
      copy.cleanup();
    }
  });
});
