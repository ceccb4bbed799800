// generated/types.ts: TypeScript types of the OpenAPI document, by openapi-typescript.
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { TS_HEADER } from './format.ts';

type Doc = Record<string, unknown>;

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

export async function emitTypes(openapi: Doc): Promise<string> {
  const ast = await openapiTS(withoutToolDefinitions(openapi) as unknown as OpenAPI3, {
    silent: true,
    alphabetize: true,
    // A field with a default may be omitted by the caller (validators fill no defaults): keep it optional.
    defaultNonNullable: false,
    // A free-form object (an approval's input and result, an event's data) is Record<string, unknown>,
    // not Record<string, never>, so a handler returns one without a cast.
    emptyObjectsUnknown: true,
  });
  return TS_HEADER + astToString(ast);
}
