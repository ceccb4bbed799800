// The committed generated/ is exactly what the contract compiles to, and compiling is deterministic.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkGenerated, compileContract, compileToPieces, listFiles, writeGenerated } from '../../generator/generate.ts';
import { Pieces } from '../../generator/emit/pieces.ts';
import { GENERATED_NOTE } from '../../generator/emit/format.ts';
import { CONTRACT_DIR, GENERATED_DIR, tempDir } from './helpers.ts';

describe('golden output', () => {
  it('generating into a temp dir equals the committed generated/ byte for byte', async () => {
    const files = await compileContract(CONTRACT_DIR);
    const tmp = tempDir('golden');
    try {
      writeGenerated(files, tmp.dir);
      const committed = listFiles(GENERATED_DIR);
      expect(listFiles(tmp.dir)).toEqual(committed);
      for (const rel of committed)
        expect(readFileSync(path.join(tmp.dir, rel), 'utf8'), rel).toBe(readFileSync(path.join(GENERATED_DIR, rel), 'utf8'));
    } finally {
      tmp.cleanup();
    }
    expect(checkGenerated(files, GENERATED_DIR).ok).toBe(true);
  });

  it('two runs produce identical bytes', async () => {
    const first = await compileContract(CONTRACT_DIR);
    const second = await compileContract(CONTRACT_DIR);
    expect([...second.keys()]).toEqual([...first.keys()]);
    for (const [rel, text] of first) expect(second.get(rel), rel).toBe(text);
  });

  it('every file begins with a line saying it is generated', async () => {
    const files = await compileContract(CONTRACT_DIR);
    for (const [rel, text] of files) {
      const first = text.split('\n')[0];
      expect(first, rel).toContain(GENERATED_NOTE);
      if (rel.endsWith('.json')) expect(first).toBe(`{"x-svc-generated": ${JSON.stringify(GENERATED_NOTE)},`);
      if (rel.endsWith('.md') || rel.endsWith('.txt')) expect(first).toBe(`<!-- ${GENERATED_NOTE} -->`);
      if (/\.(ts|js)$/.test(rel)) expect(first).toBe(`// ${GENERATED_NOTE}`);
    }
    expect(() => JSON.parse(files.get('openapi.json')!)).not.toThrow();
  });

  it('--check reports stale, missing and extra files', async () => {
    const files = await compileContract(CONTRACT_DIR);
    const tmp = tempDir('check');
    try {
      writeGenerated(files, tmp.dir);
      const { writeFileSync, rmSync } = await import('node:fs');
      writeFileSync(path.join(tmp.dir, 'routes.ts'), files.get('routes.ts')!.replace('tasks.batch_create', 'tasks.batch'));
      rmSync(path.join(tmp.dir, 'docs/llms.txt'));
      writeFileSync(path.join(tmp.dir, 'handlers/old.ts'), `// ${GENERATED_NOTE}\n`);
      // An edit that keeps the size: writeGenerated remembers what it wrote, and must still see it.
      const contractTs = files.get('contract.ts')!;
      writeFileSync(path.join(tmp.dir, 'contract.ts'), contractTs.replace('export', 'EXPORT'));
      const report = checkGenerated(files, tmp.dir);
      expect(report.ok).toBe(false);
      expect(report.stale).toEqual(['contract.ts', 'routes.ts']);
      expect(report.missing).toEqual(['docs/llms.txt']);
      expect(report.extra).toEqual(['handlers/old.ts']);
      expect(report.text).toContain('-  { id: "tasks.batch"');
      expect(report.text).toContain('+  { id: "tasks.batch_create"');
      // Writing again repairs everything and removes the stale generated file.
      const written = writeGenerated(files, tmp.dir);
      expect(written.removed).toEqual(['handlers/old.ts']);
      expect(written.written.sort()).toEqual(['contract.ts', 'docs/llms.txt', 'routes.ts']);
      expect(checkGenerated(files, tmp.dir).ok).toBe(true);
    } finally {
      tmp.cleanup();
    }
  });

  it('the pieces `svc generate` writes and checks (openapi.json by path item) are the same bytes', async () => {
    const { files } = await compileToPieces(CONTRACT_DIR);
    expect(files.get('openapi.json')).toBeInstanceOf(Pieces);
    const tmp = tempDir('pieces');
    try {
      writeGenerated(files, tmp.dir);
      for (const rel of listFiles(GENERATED_DIR))
        expect(readFileSync(path.join(tmp.dir, rel), 'utf8'), rel).toBe(readFileSync(path.join(GENERATED_DIR, rel), 'utf8'));
      expect(checkGenerated(files, tmp.dir).ok).toBe(true);
      const { writeFileSync } = await import('node:fs');
      const file = path.join(tmp.dir, 'openapi.json');
      writeFileSync(file, readFileSync(file, 'utf8').replace('"operationId": "tasks.batch_create"', '"operationId": "tasks.batch"'));
      const report = checkGenerated(files, tmp.dir);
      expect(report.stale).toEqual(['openapi.json']);
      expect(report.text).toContain('+        "operationId": "tasks.batch_create"');
      expect(writeGenerated(files, tmp.dir).written).toEqual(['openapi.json']);
      expect(checkGenerated(files, tmp.dir).ok).toBe(true);
    } finally {
      tmp.cleanup();
    }
  });
});
