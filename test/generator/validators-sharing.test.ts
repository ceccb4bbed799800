// Operations whose schemas are equal share one compiled validator (generator/emit/validators.ts):
// the committed generated/validators.js exports the same function under each of their names, and
// distinct schemas keep distinct functions.
import { describe, expect, it } from 'vitest';
import { loadContract } from '../../generator/load.ts';
import { buildModel } from '../../generator/model.ts';
import { resultValidators, validators } from '../../generated/validators.js';
import { CONTRACT_DIR } from './helpers.ts';

describe('shared validators', () => {
  const model = buildModel(loadContract(CONTRACT_DIR));
  const entries = model.operations.flatMap((op) => [
    { fn: validators[op.def.id], shape: JSON.stringify(model.schemas[op.inputName]), label: `${op.def.id} input` },
    { fn: resultValidators[op.def.id], shape: JSON.stringify(model.schemas[op.outputName]), label: `${op.def.id} result` },
  ]);

  it('one function per distinct schema, fewer than two per operation', () => {
    const shapes = new Set(entries.map((e) => e.shape));
    const functions = new Set(entries.map((e) => e.fn));
    expect(functions.size).toBe(shapes.size);
    expect(functions.size).toBeLessThan(entries.length);
  });

  it('the same function exactly when the schemas are equal', () => {
    const byFn = new Map<unknown, string>();
    for (const e of entries) {
      const seen = byFn.get(e.fn);
      if (seen === undefined) byFn.set(e.fn, e.shape);
      else expect(seen === e.shape, e.label).toBe(true);
    }
  });

  it('a shared validator still validates: an object of unknown fields fails with errors for each operation that shares it', () => {
    const shared = entries.filter((e, i) => entries.findIndex((f) => f.fn === e.fn) !== i);
    expect(shared.length).toBeGreaterThan(0);
    for (const e of shared) {
      expect(e.fn({ definitelyNotAField: 1 }), e.label).toBe(false);
      expect(e.fn.errors?.length, e.label).toBeGreaterThan(0);
    }
  });
});
