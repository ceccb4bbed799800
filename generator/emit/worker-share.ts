// The emitters that a large contract's compile runs on the compiler's worker thread
// (parallel/index.ts); a small contract's compile runs them on the main thread like the rest: the validators and the docs. Chosen
// so the two threads finish together (at 8,200 operations each half is about 3 s) and so their output
// (a few megabytes) is cheap to send back; the OpenAPI document, its types and the registry (130 MB
// at that size) stay on the main thread. This module imports neither TypeScript nor openapi-typescript.
import type { Model } from '../model.ts';
import { emitDocs } from './docs.ts';
import { emitValidators } from './validators.ts';

export function emitWorkerShare(model: Model): Map<string, string> {
  const files = new Map<string, string>();
  const validators = emitValidators(model);
  files.set('validators.js', validators.js);
  files.set('validators.d.ts', validators.dts);
  for (const [file, text] of validators.families) files.set(file, text);
  for (const [file, text] of emitDocs(model)) files.set(file, text);
  return files;
}
