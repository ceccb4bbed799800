// A generated file held as the pieces it was composed from. At 8,200 operations openapi.json is 83 MB,
// types.ts 48 MB: joining such a text, comparing it with the last one and encoding it to write it took
// most of a re-emit (and 1.5-3 s of a full generate) on a machine where every fresh page of memory
// costs a fault. Their emitters compose them from pieces (openapi-json.ts, types-units.ts), memoised in
// a watcher; a piece keeps its UTF-8 bytes once encoded, an unchanged file is known by its pieces being
// the same ones, and a changed file is written and hashed from the pieces' bytes (generate.ts,
// cache.ts). The worker's files arrive as bytes it encoded (EncodedFile). compileContract's callers
// see plain strings (textOf).
import { createHash, type Hash } from 'node:crypto';

export interface Piece {
  readonly text: string;
  /** The text's UTF-8 bytes, once a file holding this piece has been written. */
  bytes?: Buffer;
}

export const piece = (text: string): Piece => ({ text });

export class Pieces {
  constructor(readonly parts: readonly Piece[]) {}

  toString(): string {
    return this.parts.map((p) => p.text).join('');
  }

  /** Every part's bytes (encoded once per piece). */
  buffers(): Buffer[] {
    return this.parts.map((p) => (p.bytes ??= Buffer.from(p.text, 'utf8')));
  }

  /** The same text as other: the same pieces (compared as objects first, by text only when they differ). */
  sameAs(other: Pieces): boolean {
    if (other.parts.length !== this.parts.length) return false;
    return this.parts.every((p, i) => p === other.parts[i] || p.text === other.parts[i]!.text);
  }

  /**
   * The file's bytes in order, in chunks: pieces already encoded as their bytes, the rest encoded into
   * one buffer reused from chunk to chunk (a one-shot write or hash of 83 MB of pieces allocates no
   * buffer per piece and touches no fresh memory). A chunk is valid only until the next is asked for.
   */
  *chunks(): Generator<Buffer> {
    let used = 0;
    for (const p of this.parts) {
      const most = p.bytes ? 0 : p.text.length * 3; // UTF-8 bytes per UTF-16 unit, at most
      if (p.bytes || most > SCRATCH.length) {
        if (used) yield SCRATCH.subarray(0, used);
        used = 0;
        yield p.bytes ?? Buffer.from(p.text, 'utf8');
        continue;
      }
      if (used + most > SCRATCH.length) {
        yield SCRATCH.subarray(0, used);
        used = 0;
      }
      used += SCRATCH.write(p.text, used, 'utf8');
    }
    if (used) yield SCRATCH.subarray(0, used);
  }

  /** Feeds the file's bytes to a hash without building the whole text. */
  hashInto(hash: Hash): Hash {
    for (const bytes of this.chunks()) hash.update(bytes);
    return hash;
  }
}

/** The buffer Pieces.chunks encodes into (one thread's, used by one chunks() at a time). */
const SCRATCH = Buffer.allocUnsafeSlow(1 << 20);

/**
 * A file that arrives as its UTF-8 bytes (the compiler's worker encodes its share: parallel/worker.ts):
 * one piece whose text is decoded only if someone reads it (a diff, compileContract's texts); the
 * writer and the hash use the bytes, and svc generate hands such files back to the worker to write
 * (generate.ts writeGeneratedShared).
 */
export class EncodedFile extends Pieces {
  constructor(readonly bytes: Buffer) {
    let text: string | undefined;
    super([
      {
        bytes,
        get text() {
          return (text ??= bytes.toString('utf8'));
        },
      },
    ]);
  }
}

/** What an emitter produces for one file: its text, or (large files, and the worker's bytes) its pieces. */
export type GeneratedText = string | Pieces;

/** Whether two generated texts are the same (pieces: piece by piece, without building the text). */
export function sameGenerated(a: GeneratedText, b: GeneratedText): boolean {
  if (typeof a === 'string' || typeof b === 'string') return typeof a === 'string' && typeof b === 'string' && a === b;
  return a === b || a.sameAs(b);
}

export const textOf = (generated: GeneratedText): string => (typeof generated === 'string' ? generated : generated.toString());

export const sha256Of = (generated: GeneratedText): string =>
  (typeof generated === 'string' ? createHash('sha256').update(generated) : generated.hashInto(createHash('sha256'))).digest('hex');

/** Every file as a string (what every caller but a watcher's writer wants). */
export function asTexts(files: Map<string, GeneratedText>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, generated] of files) out.set(name, textOf(generated));
  return out;
}

/**
 * A watcher's pieces by their text, from one compile to the next: an emitter that keeps its texts
 * (registry.ts's per-family runs) and puts a file together from them gets the same piece for the same
 * text, its bytes encoded once. `piecesOf` keeps only the pieces of the file it last made.
 */
export function pieceCache(): (parts: readonly string[]) => Pieces {
  let last = new Map<string, Piece>();
  return (parts) => {
    const next = new Map<string, Piece>();
    const out = parts.map((text) => {
      const known = next.get(text) ?? last.get(text) ?? piece(text);
      next.set(text, known);
      return known;
    });
    last = next;
    return new Pieces(out);
  };
}
