// What the compiler's main thread and its worker (worker.ts) send each other.

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
  | {
      kind: 'write';
      outDir: string;
      /** Files as UTF-8 bytes: buffers[buffer] from start to end. */
      buffers: ArrayBuffer[];
      files: { name: string; buffer: number; start: number; end: number }[];
    };

/** What the worker wrote of the files it was given to write (the rest held the same bytes already). */
export interface WrittenFiles {
  written: string[];
  unchanged: number;
}

/**
 * The worker's share of the generated files, encoded there: each file's UTF-8 bytes end at its `ends`
 * entry in `bytes`, which is transferred (not copied) to the main thread.
 */
export interface EncodedFiles {
  names: string[];
  ends: number[];
  bytes: ArrayBuffer;
}

export type Result = ParseAnswer[] | EncodedFiles | WrittenFiles;

export type Response = { id: number; ok: true; result: Result } | { id: number; ok: false; error: string };
