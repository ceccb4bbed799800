// generated/types.ts: TypeScript types of the OpenAPI document, by openapi-typescript.
import { astToString, resolveRef, scanDiscriminators, transformSchema, type GlobalContext, type OpenAPI3, type OpenAPITSOptions } from 'openapi-typescript';
import { TS_HEADER } from './format.ts';

type Doc = Record<string, unknown>;

// openapi-typescript's `alphabetize` sorts the entries of every object it reads with
// a.localeCompare(b, 'en-us', { numeric: true }), which builds a collator per comparison: a tenth of
// its time. Handing it objects whose keys are already in that order leaves its sort one comparison
// per key (the order, and so the output, is the same whatever order the keys come in).
const collator = new Intl.Collator('en-us', { numeric: true });

/** A deep copy with every object's keys in openapi-typescript's order. */
function collated(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(collated);
  if (value === null || typeof value !== 'object') return value;
  const out: Doc = {};
  for (const key of Object.keys(value).sort(collator.compare)) out[key] = collated((value as Doc)[key]);
  return out;
}

/** The document without the x-svc-mcp tool definitions: they make no types, only parsing work. */
function withoutToolDefinitions(openapi: Doc): Doc {
  const paths: Record<string, Doc> = {};
  for (const [p, item] of Object.entries((openapi.paths ?? {}) as Record<string, Doc>)) {
    const copy: Doc = {};
    for (const [method, op] of Object.entries(item)) {
      if (op && typeof op === 'object' && 'x-svc-mcp' in op) {
        const { 'x-svc-mcp': _tool, ...rest } = op as Doc;
        copy[method] = rest;
      } else copy[method] = op;
    }
    paths[p] = copy;
  }
  return { ...openapi, paths };
}

const OPTIONS = {
  silent: true,
  alphabetize: true,
  // A field with a default may be omitted by the caller (validators fill no defaults): keep it optional.
  defaultNonNullable: false,
  // A free-form object (an approval's input and result, an event's data) is Record<string, unknown>,
  // not Record<string, never>, so a handler returns one without a cast.
  emptyObjectsUnknown: true,
} satisfies OpenAPITSOptions;

/**
 * openapiTS() without its Redocly pass. openapiTS(doc) first lints the document with Redocly's
 * `minimal` rules and bundles it (two full walks that resolve every $ref: 60% of its time), then
 * calls the exported transformSchema. Our document is built in memory with internal refs only, so
 * bundling returns it unchanged, and `svc lint` (and test/contract) lint it with Redocly's stricter
 * rules. The context is openapiTS's own (7.13.0) with the defaults of every option we leave unset.
 */
function context(schema: OpenAPI3): GlobalContext {
  return {
    additionalProperties: false,
    alphabetize: OPTIONS.alphabetize,
    arrayLength: false,
    defaultNonNullable: OPTIONS.defaultNonNullable,
    discriminators: scanDiscriminators(schema, OPTIONS),
    emptyObjectsUnknown: OPTIONS.emptyObjectsUnknown,
    enum: false,
    enumValues: false,
    conditionalEnums: false,
    dedupeEnums: false,
    excludeDeprecated: false,
    exportType: false,
    immutable: false,
    rootTypes: false,
    rootTypesNoSchemaPrefix: false,
    rootTypesKeepCasing: false,
    injectFooter: [],
    pathParamsAsTypes: false,
    postTransform: undefined,
    propertiesRequiredByDefault: false,
    // Read only by openapiTS's lint and bundle step, never by transformSchema.
    redoc: undefined as unknown as GlobalContext['redoc'],
    silent: OPTIONS.silent,
    inject: undefined,
    transform: undefined,
    transformProperty: undefined,
    makePathsEnum: false,
    generatePathParams: false,
    readWriteMarkers: false,
    resolve<T>($ref: string): T | undefined {
      return resolveRef<T>(schema, $ref, { silent: OPTIONS.silent });
    },
  };
}

export async function emitTypes(openapi: Doc): Promise<string> {
  const schema = collated(withoutToolDefinitions(openapi)) as OpenAPI3;
  return TS_HEADER + astToString(transformSchema(schema, context(schema)));
}
