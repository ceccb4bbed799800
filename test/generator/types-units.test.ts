// generated/types.ts unit by unit (generator/emit/types-units.ts) is byte for byte the whole-document
// transform (openapi-typescript's transformSchema), on the real contract, on a synthetic contract of
// cloned families, after edits that the memo must notice, and on documents built to trip it.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadContract } from '../../generator/load.ts';
import { buildModel } from '../../generator/model.ts';
import { buildOpenApi } from '../../generator/emit/openapi.ts';
import { publishDynamicTools } from '../../generator/emit/mcp-dynamic.ts';
import { emitTypes, emitTypesWhole } from '../../generator/emit/types.ts';
import { emitTypesByUnit as unitPieces, typesUnitStats } from '../../generator/emit/types-units.ts';
import { textOf } from '../../generator/emit/pieces.ts';
import { synthContract } from '../../scripts/synth-contract.ts';
import { CONTRACT_DIR, tempDir } from './helpers.ts';

type Doc = Record<string, any>;

/** types.ts by unit as text (the emitter answers pieces), or null when it falls back. */
function emitTypesByUnit(doc: Doc): string | null {
  const pieces = unitPieces(doc);
  return pieces && textOf(pieces);
}

function documentOf(contractDir: string): Doc {
  const model = buildModel(loadContract(contractDir));
  const openapi = buildOpenApi(model);
  publishDynamicTools(openapi, model);
  return openapi;
}

/** Both emitters on one document: equal, and the unit emitter did not fall back. */
function expectSame(doc: Doc): void {
  const units = emitTypesByUnit(doc);
  expect(units).not.toBeNull();
  expect(units === emitTypesWhole(doc), 'types.ts by unit differs from the whole-document transform').toBe(true);
}

/** A small document: two paths whose responses point at two schemas, as a test may bend it. */
function smallDocument(): Doc {
  const op = (id: string, ref: string) => ({
    operationId: id,
    summary: 'Read one',
    tags: [id],
    responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } } },
  });
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: { '/v1/a': { get: op('a.get', 'A') }, '/v1/b': { get: op('b.get', 'B') } },
    components: {
      schemas: {
        A: { type: 'object', properties: { item: { $ref: '#/components/schemas/Item' } }, required: ['item'] },
        B: { type: 'object', properties: { item: { $ref: '#/components/schemas/Item' } }, required: ['item'] },
        Item: { type: 'object', properties: { n: { type: 'integer', default: 1 } } },
      },
    },
  };
}

describe('types.ts unit by unit', () => {
  it('is the whole-document transform for the real contract', () => {
    const doc = documentOf(CONTRACT_DIR);
    expectSame(doc);
    expect(emitTypesByUnit(doc)).toBe(readFileSync('generated/types.ts', 'utf8'));
  });

  it('transforms a cloned family once: a 3x synthetic contract transforms no more units than the real one', () => {
    const { dir, cleanup } = tempDir('types-units');
    try {
      const real = documentOf(CONTRACT_DIR);
      emitTypesByUnit(smallDocument()); // a run of another document empties the memo of the real one
      emitTypesByUnit(real);
      const realTransformed = typesUnitStats.transformed;
      expect(realTransformed).toBeGreaterThan(100);
      const doc = documentOf(synthContract(3, CONTRACT_DIR, `${dir}/contract`));
      emitTypesByUnit(smallDocument());
      expectSame(doc);
      // The first run of the synthetic contract (expectSame's) transformed what the real one did: the
      // clones came from the memo. A second run transforms nothing.
      emitTypesByUnit(smallDocument());
      emitTypesByUnit(doc);
      expect(typesUnitStats.units).toBeGreaterThan(2.5 * Object.keys(real.paths).length);
      expect(typesUnitStats.transformed).toBe(realTransformed);
      emitTypesByUnit(doc);
      expect(typesUnitStats.transformed).toBe(0);
    } finally {
      cleanup();
    }
  });

  it('sees an edit: a changed description re-transforms that unit only, and the text follows it', () => {
    const doc = documentOf(CONTRACT_DIR);
    emitTypesByUnit(doc);
    const edited = structuredClone(doc);
    edited.paths['/v1/tasks'].get.description = 'Edited for the memo test.';
    expectSame(edited);
    expect(emitTypesByUnit(edited)).toContain('Edited for the memo test.');
    emitTypesByUnit(doc);
    emitTypesByUnit(edited);
    expect(typesUnitStats.transformed).toBe(1);
  });

  it('sees a change in what a unit resolved: a referenced schema given a default', () => {
    const doc = smallDocument();
    expectSame(doc);
    const edited = structuredClone(doc);
    edited.components.schemas.Item.properties.n.default = 2;
    expectSame(edited);
    expect(emitTypesByUnit(edited)).toContain('@default 2');
  });

  it('keeps apart two units equal but for a name when the names resolve to different content', () => {
    const doc = smallDocument();
    doc.components.schemas.B.properties.item = { $ref: '#/components/schemas/Other' };
    doc.components.schemas.Other = { type: 'object', properties: { n: { type: 'string', default: 'x' } } };
    expectSame(doc);
    const text = emitTypesByUnit(doc)!;
    expect(text).toContain('components["schemas"]["Other"]');
    expect(text).toContain('components["schemas"]["Item"]');
  });

  it('prints names that need quoting, escaping or no quotes as the whole transform does', () => {
    const doc = smallDocument();
    doc.components.schemas['Ünïcode'] = { type: 'string' };
    doc.components.schemas['with space'] = { $ref: '#/components/schemas/Ünïcode' };
    doc.components.schemas['123'] = { type: 'integer' };
    doc.components.schemas['has"quote'] = { type: 'boolean' };
    doc.components.schemas['__svc0__'] = { $ref: '#/components/schemas/A' };
    doc.components.schemas.Spelled = { type: 'string', description: 'Mentions __svc5__ and __svc0-__, which are not placeholders.' };
    doc.paths['/v1/b'].get.description = 'Reads __svc1__.';
    doc.paths['/v1/a:do-it'] = { post: { operationId: 'a.do_it', responses: { '204': { description: 'done' } } } };
    doc.paths['/v1/ünï'] = { post: { operationId: 'ünï', responses: { '204': { description: 'done' } } } };
    expectSame(doc);
  });

  it("prints the helper types the transform adds (WithRequired for allOf of a $ref and required) once, where the whole transform puts them, memoised units included", () => {
    const withRequired = (doc: Doc) => (emitTypesByUnit(doc) as string).match(/^type WithRequired</gm)?.length ?? 0;
    // In a component: after the operations interface.
    const inComponent = smallDocument();
    inComponent.components.schemas.A = { allOf: [{ $ref: '#/components/schemas/Item' }], required: ['n'] };
    inComponent.components.schemas.B = { allOf: [{ $ref: '#/components/schemas/Item' }], required: ['n'] };
    expectSame(inComponent);
    expect(withRequired(inComponent)).toBe(1);
    // In an operation's request body (a path unit): the same, added while the paths are transformed.
    const inPath = smallDocument();
    inPath.paths['/v1/a'].post = {
      operationId: 'a.create',
      requestBody: { content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Item' }], required: ['n'] } } } },
      responses: { '204': { description: 'done' } },
    };
    expectSame(inPath);
    // No operation at all: the helper, then operations as an empty record.
    const noPaths = { ...inComponent, paths: {} };
    expectSame(noPaths);
    expect(emitTypesByUnit(noPaths)).toMatch(/type WithRequired<[^]*export type operations = Record<string, never>;\n$/);
    // Every unit from the memo (a second run of the same document): the helper is still printed.
    expectSame(inComponent);
    expect(withRequired(inComponent)).toBe(1);
  });

  it('falls back to the whole transform for a discriminator, and emitTypes still answers the same text', async () => {
    const doc = smallDocument();
    doc.components.schemas.A = {
      oneOf: [{ $ref: '#/components/schemas/B' }, { $ref: '#/components/schemas/Item' }],
      discriminator: { propertyName: 'kind' },
    };
    expect(emitTypesByUnit(doc)).toBeNull();
    expect(await emitTypes(doc)).toBe(emitTypesWhole(doc));
  });

  it('is pinned to the openapi-typescript it was written against (the fields it reads are listed from that version)', () => {
    const version = createRequire(import.meta.url)('openapi-typescript/package.json').version;
    expect(version, 'types-units.ts lists the fields openapi-typescript reads from path items and operations: re-read them for the new version, then change this pin').toBe('7.13.0');
  });
});
