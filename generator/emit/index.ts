// Every generated file, as relative path -> content. Emitters read only the model.
import type { Model } from '../model.ts';
import { buildOpenApi } from './openapi.ts';
import { byString } from './format.ts';
import { asTexts, type GeneratedText } from './pieces.ts';
import { openapiJson } from './openapi-json.ts';
import { publishDynamicTools } from './mcp-dynamic.ts';
import { emitWorkerShare } from './worker-share.ts';
import { emitOnWorkerThread, parallelMinOperations } from '../parallel/index.ts';
import { session } from '../session.ts';
import { emitWiring } from './wiring.ts';
import { wiringOptions } from './wiring-options.ts';

/** What the main thread emits: the OpenAPI document and its types. */
async function emitMainShare(model: Model): Promise<Map<string, GeneratedText>> {
  const files = new Map<string, GeneratedText>();
  const openapi = buildOpenApi(model);
  publishDynamicTools(openapi, model);
  files.set('openapi.json', openapiJson(openapi));
  // openapi-typescript and TypeScript load here, on first use (test/governance/compiler-build.test.ts).
  const { emitTypes } = await import('./types.ts');
  files.set('types.ts', await emitTypes(openapi));
  return files;
}

/** Every generated file as text. */
export async function emitAll(model: Model): Promise<Map<string, string>> {
  return asTexts(await emitAllPieces(model));
}

/** Every generated file; in a watcher its large files as pieces (pieces.ts), for its writer. */
export async function emitAllPieces(model: Model): Promise<Map<string, GeneratedText>> {
  // A large contract sends the worker its share (worker-share.ts) first. The worker's failure (an ajv
  // refusal, say) is met by running that share here, which throws the error itself for
  // compileWithModel to locate, or succeeds when the thread was the trouble.
  // A watcher emits everything here: the emitters' memos are kept by object identity (session.ts),
  // which a model copied to the worker would not have.
  const shared = !session.longLived && model.operations.length >= parallelMinOperations() ? emitOnWorkerThread(model) : null;
  const files = await emitMainShare(model);
  const theirs = shared ? await shared.catch(() => emitWorkerShare(model)) : emitWorkerShare(model);
  for (const [file, text] of theirs) files.set(file, text);
  files.set('wiring.ts', emitWiring(wiringOptions()));
  return new Map([...files].sort(([a], [b]) => byString(a, b)));
}
