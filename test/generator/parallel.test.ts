// A large contract's compile on two threads (generator/parallel/): the worker parses half the YAML and
// runs its share of the emitters (emit/worker-share.ts). Output, diagnostics and failures are those of one thread.
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compileContract, compileToPieces, writeGenerated, writeGeneratedShared } from '../../generator/generate.ts';
import { emitAll } from '../../generator/emit/index.ts';
import { loadContract, loadContractAsync, parseYamlFile } from '../../generator/load.ts';
import type { Diagnostic } from '../../generator/source.ts';
import { buildModel } from '../../generator/model.ts';
import { parallelStats } from '../../generator/parallel/index.ts';
import { synthContract } from '../../scripts/synth-contract.ts';
import { CONTRACT_DIR, tempDir } from './helpers.ts';

const NEVER = String(Number.MAX_SAFE_INTEGER);
const saved = process.env.SVC_PARALLEL_MIN_OPERATIONS;
afterEach(() => {
  if (saved === undefined) delete process.env.SVC_PARALLEL_MIN_OPERATIONS;
  else process.env.SVC_PARALLEL_MIN_OPERATIONS = saved;
});

describe('the compile on two threads', () => {
  it('writes the same files as one thread, with the worker parsing and emitting', async () => {
    const { dir, cleanup } = tempDir('parallel');
    try {
      const contract = synthContract(3, CONTRACT_DIR, path.join(dir, 'contract'));
      process.env.SVC_PARALLEL_MIN_OPERATIONS = '0';
      const before = { ...parallelStats };
      const two = await compileContract(contract);
      expect(parallelStats.parse).toBe(before.parse + 1);
      expect(parallelStats.emit).toBe(before.emit + 1);
      process.env.SVC_PARALLEL_MIN_OPERATIONS = NEVER;
      const one = await compileContract(contract);
      expect(parallelStats.emit).toBe(before.emit + 1);
      expect([...two.keys()]).toEqual([...one.keys()]);
      for (const [file, text] of one) expect(two.get(file) === text, `${file} differs between one thread and two`).toBe(true);
      // What `svc generate` writes: the worker's files as the bytes it encoded, the main thread's as pieces.
      process.env.SVC_PARALLEL_MIN_OPERATIONS = '0';
      const out = path.join(dir, 'generated');
      writeGenerated((await compileToPieces(contract)).files, out);
      for (const [file, text] of one) expect(readFileSync(path.join(out, file), 'utf8') === text, `${file} written differs from one thread's`).toBe(true);
      // And as `svc generate` writes: the worker writes the files it encoded, this thread the rest.
      const shared = path.join(dir, 'generated-shared');
      const { files } = await compileToPieces(contract);
      const writes = parallelStats.write;
      const report = await writeGeneratedShared(files, shared);
      expect(parallelStats.write).toBe(writes + 1);
      expect(report.written).toEqual([...one.keys()]);
      for (const [file, text] of one) expect(readFileSync(path.join(shared, file), 'utf8') === text, `${file} written on two threads differs`).toBe(true);
      // Again over what it wrote, with one file edited and one stale generated file: both are seen.
      writeFileSync(path.join(shared, 'docs/llms.txt'), 'edited');
      writeFileSync(path.join(shared, 'stale.ts'), readFileSync(path.join(shared, 'routes.ts'), 'utf8'));
      const again = await writeGeneratedShared((await compileToPieces(contract)).files, shared);
      expect(again.written).toEqual(['docs/llms.txt']);
      expect(again.unchanged).toBe(one.size - 1);
      expect(again.removed).toEqual(['stale.ts']);
    } finally {
      cleanup();
    }
  });

  it('reports a YAML error in a file the worker parsed as one thread does, at its line and column', async () => {
    const { dir, cleanup } = tempDir('parallel-yaml');
    try {
      const contract = synthContract(2, CONTRACT_DIR, path.join(dir, 'contract'));
      // The first family file goes to the worker (it takes the first files up to half the bytes).
      writeFileSync(path.join(contract, 'families', 'actions.yaml'), 'family: actions\noperations: [\n  - id: x\n');
      process.env.SVC_PARALLEL_MIN_OPERATIONS = '0';
      const before = parallelStats.parse;
      const two = await loadContractAsync(contract);
      expect(parallelStats.parse).toBe(before + 1);
      // What one thread reports: the file parsed here, alone (loadContract would reuse this process's parses).
      const broken = path.join(contract, 'families', 'actions.yaml');
      const expected: Diagnostic[] = [];
      parseYamlFile(broken, readFileSync(broken, 'utf8'), expected);
      expect(expected).toHaveLength(1);
      expect(two.diagnostics).toEqual(expected);
      // Positions of a file parsed on the worker come from a parse of its text here, on first use.
      const tasksFile = path.join(contract, 'families', 'tasks.yaml');
      const tasks = two.familyFiles.find((f) => f.file.endsWith('families/tasks.yaml'))!;
      expect(tasks.positions.size).toBeGreaterThan(10);
      expect(tasks.positions).toEqual(parseYamlFile(tasksFile, readFileSync(tasksFile, 'utf8'), []).positions);
    } finally {
      cleanup();
    }
  });

  it("meets the worker's failure by running its share here: an ajv refusal surfaces as on one thread", async () => {
    const model = buildModel(loadContract(CONTRACT_DIR));
    const status = Object.values(model.schemas).find((s) => Array.isArray(s.enum)) as { enum: unknown[] };
    status.enum = [];
    process.env.SVC_PARALLEL_MIN_OPERATIONS = '0';
    const before = parallelStats.emit;
    await expect(emitAll(model)).rejects.toThrow(/enum must have non-empty array/);
    expect(parallelStats.emit).toBe(before + 1);
  });
});
