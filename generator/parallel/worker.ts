// The compiler's second thread (generator/parallel/index.ts starts it): parses YAML files and runs the
// emitters it is given, answering each request by its id. It keeps its module state between requests,
// so the validators' memo works across the runs of one `svc generate --watch`.
import { parentPort } from 'node:worker_threads';
import type { Model } from '../model.ts';
import { textOf } from '../emit/pieces.ts';
import type { ParseAnswer, Request, Response, Result } from './protocol.ts';

let loading: Promise<typeof import('../emit/worker-share.ts')> | null = null;
const emitModules = () => (loading ??= import('../emit/worker-share.ts'));

async function answer(request: Request): Promise<Result> {
  if (request.kind === 'parse') {
    const { parseYamlData } = await import('../load.ts');
    const answers = request.files.map(({ file, text }): ParseAnswer => parseYamlData(file, text));
    // The emit request follows once the main thread has built the model: load its modules meanwhile.
    void emitModules();
    return answers;
  }
  const { emitWorkerShare } = await emitModules();
  // Texts: a worker is never a watcher's (session.longLived is false here), so nothing is in pieces.
  return [...emitWorkerShare(request.model as Model)].map(([file, text]) => [file, textOf(text)]);
}

parentPort!.on('message', (request: Request) => {
  answer(request).then(
    (result) => parentPort!.postMessage({ id: request.id, ok: true, result } satisfies Response),
    (err: unknown) => parentPort!.postMessage({ id: request.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies Response),
  );
});
