// generated/types.ts: TypeScript types of the OpenAPI document, by openapi-typescript.
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { TS_HEADER } from './format.ts';

export async function emitTypes(openapi: Record<string, unknown>): Promise<string> {
  const ast = await openapiTS(openapi as unknown as OpenAPI3, { silent: true, alphabetize: true });
  return TS_HEADER + astToString(ast);
}
