// What the compiler's main thread and its worker (worker.ts) send each other.
import { EncodedFile } from '../emit/pieces.ts';

/** Parse these YAML files (path and text); run the worker's share of the emitters on this model; or write files. */
export type Request = Unnumbered & { id: number };

/** One file parsed: its data, or null when it has YAML errors (the main thread parses it again to report them). */
export interface ParseAnswer {
  data: unknown;
  ok: boolean;
}

/** A request before ask() numbers it. */
export type Unnumbered =
  | { kind: 'parse'; files: { file: string; text: string }[] }
  | { kind: 'emit'; model: unknown }
  /** Files the worker encoded, sent back to it to write: one set per buffer they are views of. */
  | { kind: 'write'; outDir: string; sets: EncodedFiles[] };

/** What the worker wrote of the files it was given to write (the rest held the same bytes already). */
export interface WrittenFiles {
  written: string[];
  unchanged: number;
}

/**
 * Files as UTF-8 bytes in one buffer, file i from starts[i] to ends[i]: the worker's share of the
 * generated files, encoded there (`bytes` is transferred, not copied, to the main thread), and the same
 * files handed back to it to write.
 */
export interface EncodedFiles {
  names: string[];
  starts: number[];
  ends: number[];
  bytes: ArrayBuffer;
}

/** Files of one buffer as generated files (views of it, nothing copied). */
export function decodedFiles({ names, starts, ends, bytes }: EncodedFiles): [string, EncodedFile][] {
  const all = Buffer.from(bytes);
  return names.map((name, i) => [name, new EncodedFile(all.subarray(starts[i], ends[i]))]);
}

/** Generated files that are views of buffers, as one set per buffer. */
export function encodedSets(files: [string, EncodedFile][]): EncodedFiles[] {
  const sets = new Map<ArrayBufferLike, EncodedFiles>();
  for (const [name, { bytes }] of files) {
    let set = sets.get(bytes.buffer);
    if (!set) sets.set(bytes.buffer, (set = { names: [], starts: [], ends: [], bytes: bytes.buffer as ArrayBuffer }));
    set.names.push(name);
    set.starts.push(bytes.byteOffset);
    set.ends.push(bytes.byteOffset + bytes.length);
  }
  return [...sets.values()];
}

export type Result = ParseAnswer[] | EncodedFiles | WrittenFiles;

export type Response = { id: number; ok: true; result: Result } | { id: number; ok: false; error: string };
