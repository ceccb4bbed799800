import { describe, expect, it } from 'vitest';
import { operations } from '../../generated/registry.ts';

// The contract's per-operation `subject:` reaches the registry the runtime resolves proposals with.
describe('approval subjects in the registry', () => {
  it('every Tier 2/3 command names its subject (or is private: keys.*), from one of its inputs', () => {
    for (const op of operations.filter((o) => o.tier === 2 || o.tier === 3)) {
      if (op.family === 'keys') expect(op.subject, op.id).toBeNull();
      else {
        expect(op.subject, op.id).not.toBeNull();
        expect(Object.keys(op.params), op.id).toContain(op.subject!.from);
      }
    }
    for (const op of operations.filter((o) => o.tier !== 2 && o.tier !== 3)) expect(op.subject, op.id).toBeNull();
  });

  it('a stage advance is about its project; a project creation about its client', () => {
    const byId = new Map(operations.map((o) => [o.id, o]));
    expect(byId.get('projects.stage.advance')!.subject).toEqual({ resource: 'project', from: 'project_id' });
    expect(byId.get('projects.create')!.subject).toEqual({ resource: 'client', from: 'clientId' });
    expect(byId.get('reviews.release')!.subject).toEqual({ resource: 'review', from: 'review_id' });
  });
});
