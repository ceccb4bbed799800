// The emitters that a large contract's compile runs on the compiler's worker thread
// (parallel/index.ts); a small contract's compile runs them on the main thread like the rest: the
// validators, the docs and the registry. Chosen so the two threads finish together (at 8,200
// operations each share is about 3.5 s: the registry moved here when the main thread's share, the
// OpenAPI document, its JSON and its types, was found finishing 2 s after this one) and so their
// output (30 MB) is cheap to send back. This module imports neither TypeScript nor openapi-typescript.
import type { Model } from '../model.ts';
import { emitDocs } from './docs.ts';
import type { GeneratedText } from './pieces.ts';
import { emitRegistry } from './registry.ts';
import { emitValidators } from './validators.ts';

/** Texts on the worker; in a watcher (main thread, emit/index.ts) the registry as pieces. */
export function emitWorkerShare(model: Model): Map<string, GeneratedText> {
  const files = new Map<string, GeneratedText>();
  files.set('registry.ts', emitRegistry(model));
  const validators = emitValidators(model);
  files.set('validators.js', validators.js);
  files.set('validators.d.ts', validators.dts);
  for (const [file, text] of validators.families) files.set(file, text);
  for (const [file, text] of emitDocs(model)) files.set(file, text);
  return files;
}
