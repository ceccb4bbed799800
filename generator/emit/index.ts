// Every generated file, as relative path -> content. Emitters read only the model.
import type { Model } from '../model.ts';
import { emitContract } from './contract.ts';
import { emitDocs } from './docs.ts';
import { emitHandlers } from './handlers.ts';
import { emitMcpTools } from './mcp-tools.ts';
import { buildOpenApi } from './openapi.ts';
import { generatedJson } from './format.ts';
import { emitRegistry } from './registry.ts';
import { emitRoutes } from './routes.ts';
import { emitTypes } from './types.ts';
import { emitValidators } from './validators.ts';
import { emitChangelog } from './changelog.ts';
import { publishDynamicTools } from './mcp-dynamic.ts';

export async function emitAll(model: Model): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const openapi = buildOpenApi(model);
  publishDynamicTools(openapi, model);
  files.set('openapi.json', generatedJson(openapi));
  files.set('types.ts', await emitTypes(openapi));
  files.set('registry.ts', emitRegistry(model));
  files.set('contract.ts', emitContract(model));
  const validators = emitValidators(model);
  files.set('validators.js', validators.js);
  files.set('validators.d.ts', validators.dts);
  for (const [file, text] of validators.families) files.set(file, text);
  files.set('routes.ts', emitRoutes(model));
  files.set('mcp-tools.ts', emitMcpTools(model));
  for (const [file, text] of emitHandlers(model)) files.set(file, text);
  for (const [file, text] of emitDocs(model)) files.set(file, text);
  for (const [file, text] of emitChangelog(model)) files.set(file, text);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
