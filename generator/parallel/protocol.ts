// What the compiler's main thread and its worker (worker.ts) send each other.

/** Parse these YAML files (path and text); or run the worker's share of the emitters on this model. */
export type Request = Unnumbered & { id: number };

/** One file parsed: its data, or null when it has YAML errors (the main thread parses it again to report them). */
export interface ParseAnswer {
  data: unknown;
  ok: boolean;
}

/** A request before ask() numbers it. */
export type Unnumbered = { kind: 'parse'; files: { file: string; text: string }[] } | { kind: 'emit'; model: unknown };

/**
 * The worker's share of the generated files, encoded there: each file's UTF-8 bytes end at its `ends`
 * entry in `bytes`, which is transferred (not copied) to the main thread.
 */
export interface EncodedFiles {
  names: string[];
  ends: number[];
  bytes: ArrayBuffer;
}

export type Result = ParseAnswer[] | EncodedFiles;

export type Response = { id: number; ok: true; result: Result } | { id: number; ok: false; error: string };
