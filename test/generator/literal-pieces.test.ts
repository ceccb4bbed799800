// In a watcher the registry, routes and handlers emitters put their files together from what they
// keep of each operation, family and schema (generator/emit/literal-pieces.ts), and the registry and routes
// from what they laid out last time. incremental.test.ts edits a contract the way an author does;
// this test hands the emitters models no compile of this contract makes, to reach the paths those
// edits do not: families that are not model.operations in order, operations out of id order, a
// schema under two names or renamed in place, keys out of literal's order (array indices,
// "__proto__", an undefined value), an operation whose output name holds another operation's schema,
// a family removed. After each, the watcher's texts (twice: the second from what the first kept) must be the
// texts of one compile (session.longLived false: no memo read or written).
import { afterAll, describe, expect, it } from 'vitest';
import { emitHandlers } from '../../generator/emit/handlers.ts';
import { textOf } from '../../generator/emit/pieces.ts';
import { emitRegistry } from '../../generator/emit/registry.ts';
import { emitRoutes } from '../../generator/emit/routes.ts';
import { loadContract } from '../../generator/load.ts';
import { buildModel, type Model } from '../../generator/model.ts';
import { forgetSessionMemos, session } from '../../generator/session.ts';
import { CONTRACT_DIR } from './helpers.ts';

afterAll(() => {
  session.longLived = false;
  forgetSessionMemos();
});

function emit(model: Model): Map<string, string> {
  return new Map([['registry.ts', textOf(emitRegistry(model))], ['routes.ts', emitRoutes(model)], ...emitHandlers(model)]);
}

/** The files that differ between the watcher's emit and one compile's. */
function differing(model: Model): string[] {
  session.longLived = false;
  const fresh = emit(model);
  session.longLived = true;
  const out: string[] = [];
  for (let pass = 1; pass <= 2; pass++) {
    const watched = emit(model);
    if ([...watched.keys()].join() !== [...fresh.keys()].join()) out.push(`pass ${pass}: the file list`);
    for (const [name, text] of fresh) if (watched.get(name) !== text) out.push(`pass ${pass}: ${name}`);
  }
  return out;
}

/** A schemas record with `extra` inserted where sorting puts it (or at the end). */
function withSchemas(model: Model, extra: Record<string, unknown>, sorted: boolean): Model {
  const entries = [...Object.entries(model.schemas), ...Object.entries(extra)];
  if (sorted) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const schemas: Record<string, unknown> = {};
  for (const [name, schema] of entries) Object.defineProperty(schemas, name, { value: schema, enumerable: true, writable: true, configurable: true });
  return { ...model, schemas: schemas as Model['schemas'] };
}

/** The schemas record with one name changed where it stands (the value, and every position, kept). */
function renamed(model: Model, from: string, to: string): Model {
  return { ...model, schemas: Object.fromEntries(Object.entries(model.schemas).map(([name, schema]) => [name === from ? to : name, schema])) };
}

/** Whether a secret is reachable from node, through $refs. */
function reachesSecret(schemas: Record<string, unknown>, node: unknown, seen = new Set<string>()): boolean {
  const text = JSON.stringify(node) ?? '';
  if (text.includes('"x-svc-secret":true')) return true;
  return [...text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)].some(([, name]) => !seen.has(name!) && reachesSecret(schemas, schemas[name!], seen.add(name!)));
}

describe("a watcher's registry, routes and handlers equal one compile's", () => {
  it('for models no edit of this contract makes', () => {
    session.longLived = true;
    forgetSessionMemos();
    const base = buildModel(loadContract(CONTRACT_DIR));
    const secretOp = base.operations.find((o) => reachesSecret(base.schemas, base.schemas[o.outputName]))!;
    const plainOp = base.operations.find((o) => !reachesSecret(base.schemas, base.schemas[o.outputName]))!;
    expect(secretOp).toBeDefined();
    const dropped = base.families[3]!;

    const variants: [string, Model][] = [
      ['the model as compiled', base],
      ['families in reverse order', { ...base, families: [...base.families].reverse() }],
      ['operations in reverse order', { ...base, operations: [...base.operations].reverse() }],
      ['a schema also under a second name, sorted in', withSchemas(base, { AaaAlias: base.schemas.Problem, ZzzAlias: base.schemas[secretOp.outputName] }, true)],
      ['schema names out of order: appended, an array index, "__proto__", an undefined value', withSchemas(base, { Aaa: { type: 'string' }, 12: { type: 'object', properties: { k: { type: 'string', 'x-svc-personal': true } } }, ['__proto__']: { properties: { p: { 'x-svc-secret': true } } }, Zed: undefined }, false)],
      ["an operation's output name holding another operation's schema (its secrets)", withSchemas(base, { [plainOp.outputName]: base.schemas[secretOp.outputName] }, true)],
      ['a schema named "properties" (the record walked as a schema reads it as its properties)', withSchemas(base, { properties: { p: { 'x-svc-personal': true } } }, true)],
      ['a schema renamed where it stands', renamed(base, 'Problem', 'Problem0')],
      ['a schema renamed where it stands, out of order now', renamed(base, 'Problem', 'AaaProblem')],
      ['family names that are array indices ("12" sorts before "3", literal puts 3 first)', { ...base, families: [{ ...base.families[0]!, name: '12' }, { ...base.families[1]!, name: '3' }, ...base.families.slice(2)] }],
      ['a family and its operations removed', { ...base, families: base.families.filter((f) => f !== dropped), operations: base.operations.filter((o) => o.def.family !== dropped.name) }],
      ['the model as compiled, again', base],
    ];
    for (const [what, model] of variants) expect(differing(model), what).toEqual([]);
  }, 60_000);
});
