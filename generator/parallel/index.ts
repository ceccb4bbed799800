// A second thread for large contracts. On a contract of PARALLEL_MIN_OPERATIONS operations or more
// (family files: PARALLEL_MIN_BYTES of YAML), `svc generate` parses half the YAML and runs about half
// the emit work (emit/worker-share.ts: all but the OpenAPI document, its JSON and its types) on a
// worker thread while the main thread does the rest: the
// machines this runs on have two cores or more, and the compile is CPU work from end to end. Below
// that, a thread costs more to start than it saves, and everything runs on the main thread as before.
// The worker is started on first use, kept for the process (its memos serve --watch) and unref'd so
// it never keeps a command alive. Output is the same either way (test/generator/parallel.test.ts).
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { decodedFiles, encodedSets, type EncodedFiles, type ParseAnswer, type Response, type Unnumbered, type WrittenFiles } from './protocol.ts';
import type { EncodedFile, GeneratedText } from '../emit/pieces.ts';

/** Operations from which the emitters are shared with the worker; SVC_PARALLEL_MIN_OPERATIONS overrides (0: always; a huge number: never). */
export function parallelMinOperations(): number {
  const set = Number(process.env.SVC_PARALLEL_MIN_OPERATIONS);
  return Number.isFinite(set) && process.env.SVC_PARALLEL_MIN_OPERATIONS !== '' ? set : 1500;
}

/** Bytes of contract YAML from which half is parsed on the worker (about 1,500 operations of the real contract's style). */
export function parallelMinBytes(): number {
  const ops = parallelMinOperations();
  return ops === 0 ? 0 : ops * 1700;
}

/** Requests this process has sent its worker, by kind (tests read it to know the worker ran). */
export const parallelStats = { parse: 0, emit: 0, write: 0 };

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();

/**
 * The worker. From the build it is dist/compiler/worker.js beside this chunk; from the sources
 * (tsx, vitest) it is worker.ts, run under tsx's loader, which a worker thread does not inherit.
 */
function start(): Worker {
  const fromSources = import.meta.url.endsWith('.ts');
  const created = fromSources
    ? new Worker(
        `(async () => { const { register } = await import(${JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs'))}); register(); await import(${JSON.stringify(new URL('./worker.ts', import.meta.url).href)}); })();`,
        { eval: true },
      )
    : new Worker(new URL('./worker.js', import.meta.url));
  created.on('message', (response: Response) => {
    const waiter = pending.get(response.id);
    pending.delete(response.id);
    if (!waiter) return;
    if (response.ok) waiter.resolve(response.result);
    else waiter.reject(new Error(`svc: the compiler's worker thread failed: ${response.error}`));
    if (!pending.size) created.unref();
  });
  created.on('error', (err) => {
    for (const waiter of pending.values()) waiter.reject(err);
    pending.clear();
    worker = null;
  });
  created.unref();
  return created;
}

function ask<T>(request: Unnumbered): Promise<T> {
  worker ??= start();
  parallelStats[request.kind]++;
  const id = nextId++;
  worker.ref();
  return new Promise<T>((resolve, reject) => {
    pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    worker!.postMessage({ ...request, id });
  });
}

/** Parse YAML files on the worker. */
export function parseOnWorker(files: { file: string; text: string }[]): Promise<ParseAnswer[]> {
  return ask<ParseAnswer[]>({ kind: 'parse', files });
}

/** The worker's share of the emitters (emitOnWorker in emit/index.ts), as generated files of the bytes it encoded. */
export async function emitOnWorkerThread(model: unknown): Promise<Map<string, GeneratedText>> {
  return new Map(decodedFiles(await ask<EncodedFiles>({ kind: 'emit', model })));
}

/** Whether this process has started its worker (only a large contract's compile does). */
export const workerStarted = (): boolean => worker !== null;

/**
 * Writes files the worker encoded into outDir, on the worker (generate.ts writeGeneratedShared), sent
 * back as the buffer they are views of (cloned once, never re-encoded). Answers what it wrote and how
 * many were unchanged. (Sending this thread's openapi.json and types.ts too, as their pieces' texts,
 * cost more in the message than writing them here: 1.6 s at 8,200 operations.)
 */
export function writeOnWorker(outDir: string, encoded: [string, EncodedFile][]): Promise<WrittenFiles> {
  // The worker's files are views of the one buffer it answered with: send it and where each lies.
  return ask<WrittenFiles>({ kind: 'write', outDir, sets: encodedSets(encoded) });
}
