// The emitters that a large contract's compile runs on the compiler's worker thread
// (parallel/index.ts); a small contract's compile runs them on the main thread like the rest: every
// emitter but the OpenAPI document, its JSON and its types. Chosen so the two threads finish together:
// the registry moved here when the main thread's share was found finishing 2 s after this one (stop
// 35), and the routes, tools, handler interfaces, contract and changelog (0.8 s at 8,200 operations)
// when the main thread's share was still found finishing 1.5 s after this one (stop 37). This module
// imports neither TypeScript nor openapi-typescript.
import type { Model } from '../model.ts';
import { emitDocs } from './docs.ts';
import type { GeneratedText } from './pieces.ts';
import { emitRegistry } from './registry.ts';
import { emitValidators } from './validators.ts';
import { emitContract } from './contract.ts';
import { emitHandlers } from './handlers.ts';
import { emitMcpTools } from './mcp-tools.ts';
import { emitRoutes } from './routes.ts';
import { emitChangelog } from './changelog.ts';

/** Texts on the worker; in a watcher (main thread, emit/index.ts) the registry as pieces. */
export function emitWorkerShare(model: Model): Map<string, GeneratedText> {
  const files = new Map<string, GeneratedText>();
  files.set('registry.ts', emitRegistry(model));
  const validators = emitValidators(model);
  files.set('validators.js', validators.js);
  files.set('validators.d.ts', validators.dts);
  for (const [file, text] of validators.families) files.set(file, text);
  for (const [file, text] of emitDocs(model)) files.set(file, text);
  files.set('contract.ts', emitContract(model));
  files.set('routes.ts', emitRoutes(model));
  files.set('mcp-tools.ts', emitMcpTools(model));
  for (const [file, text] of emitHandlers(model)) files.set(file, text);
  for (const [file, text] of emitChangelog(model)) files.set(file, text);
  return files;
}
