// The compiler's second thread (generator/parallel/index.ts starts it): parses YAML files and runs the
// emitters it is given, answering each request by its id. It keeps its module state between requests,
// so the validators' memo works across the runs of one `svc generate --watch`.
import { parentPort } from 'node:worker_threads';
import type { Model } from '../model.ts';
import { textOf } from '../emit/pieces.ts';
import { decodedFiles, type EncodedFiles, type ParseAnswer, type Request, type Response, type Result } from './protocol.ts';

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
  if (request.kind === 'write') {
    const { writeFiles } = await import('../generate.ts');
    const report = { written: [] as string[], unchanged: 0 };
    for (const set of request.sets) writeFiles(decodedFiles(set), request.outDir, report);
    return report;
  }
  const { emitWorkerShare } = await emitModules();
  // Texts: a worker is never a watcher's (session.longLived is false here), so nothing is in pieces.
  return encoded([...emitWorkerShare(request.model as Model)].map(([file, text]) => [file, textOf(text)]));
}

/**
 * The files' UTF-8 bytes in one buffer, to be transferred: the encoding is done here, beside the main
 * thread's emitters, and the main thread neither copies 75 MB of strings out of a message (at 8,200
 * operations) nor encodes them to write them.
 */
function encoded(files: [string, string][]): EncodedFiles {
  const starts: number[] = [];
  const ends: number[] = [];
  let total = 0;
  for (const [, text] of files) {
    starts.push(total);
    ends.push((total += Buffer.byteLength(text, 'utf8')));
  }
  const bytes = Buffer.allocUnsafeSlow(total);
  files.forEach(([, text], i) => bytes.write(text, starts[i], 'utf8'));
  return { names: files.map(([name]) => name), starts, ends, bytes: bytes.buffer as ArrayBuffer };
}

parentPort!.on('message', (request: Request) => {
  answer(request).then(
    (result) => parentPort!.postMessage({ id: request.id, ok: true, result } satisfies Response, 'bytes' in result ? [result.bytes as ArrayBuffer] : []),
    (err: unknown) => parentPort!.postMessage({ id: request.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies Response),
  );
});
