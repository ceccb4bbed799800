// Helpers of the emitters that keep, in a watcher, what they derived from each family
// (validators.ts, docs.ts): the check that a kept family part still reads the same schemas, and
// joins of many pieces that hand back the last text while the pieces are the same.
import type { JsonSchema } from '../../runtime/contract-types.ts';
import type { FamilyModel, Model } from '../model.ts';
import { identityMemo, onForget, session } from '../session.ts';
import { pieceCache, type GeneratedText, type Pieces } from './pieces.ts';

/**
 * The model.schemas names a family's parts read (its operations' input and output schemas), with the
 * objects found there. A FamilyModel is the same object while its operations are (model.ts), and so
 * are the schemas its family generated; another family's schema of the same name would take the
 * name's place in model.schemas (pascal('a.b_c') is pascal('a_b.c')), which the checks now refuse
 * (generated-name-clash), so this comparison is a guard that holds whenever the family is unchanged.
 * An emitter keeps a part built from a family only while the family's SchemaReads in the model
 * (readsOfModel) is the one it was built with: the same object exactly while every name still holds
 * the object found.
 */
export interface SchemaReads {
  names: string[];
  raws: (JsonSchema | undefined)[];
}

/** A watcher's last SchemaReads of each family, and each model's (both emitters read a model's once). */
const lastReads = identityMemo<FamilyModel, SchemaReads>();
const ofModel = new WeakMap<Model, SchemaReads[]>();

/** Nothing is kept outside a watcher, so nothing is compared: every family's reads are this one. */
const UNCHECKED: SchemaReads = { names: [], raws: [] };

/** Each family's SchemaReads in the model, in model.families' order. */
export function readsOfModel(model: Model): SchemaReads[] {
  if (!session.longLived) return new Array<SchemaReads>(model.families.length).fill(UNCHECKED);
  const known = ofModel.get(model);
  if (known) return known;
  const reads: SchemaReads[] = [];
  for (const family of model.families) {
    const last = lastReads.get(family);
    reads.push(last && same(last, model.schemas) ? last : lastReads.set(family, schemaReads(family, model.schemas)));
  }
  ofModel.set(model, reads);
  return reads;
}

function schemaReads(family: FamilyModel, schemas: Record<string, JsonSchema>): SchemaReads {
  const names: string[] = [];
  const raws: (JsonSchema | undefined)[] = [];
  for (const op of family.operations) {
    names.push(op.inputName, op.outputName);
    raws.push(schemas[op.inputName], schemas[op.outputName]);
  }
  return { names, raws };
}

function same(reads: SchemaReads, schemas: Record<string, JsonSchema>): boolean {
  const { names, raws } = reads;
  for (let i = 0; i < names.length; i++) if (schemas[names[i]!] !== raws[i]) return false;
  return true;
}

/**
 * A watcher's last join under each key, with its pieces. A join of the same pieces (equal strings:
 * kept pieces are the same objects, so the comparison is mostly of pointers) hands back the last
 * text itself, which the writer (generate.ts writeGenerated) then knows unchanged without comparing it.
 */
interface Last<T> {
  pieces: string[];
  sep: string;
  head: string;
  tail: string;
  result: T;
}
let lastJoins = new Map<string, Last<string>>();
let lastPieced = new Map<string, Last<{ file: Pieces; cache: (parts: readonly string[]) => Pieces }>>();
onForget(() => {
  lastJoins = new Map();
  lastPieced = new Map();
});

/**
 * last's result when it was made of the same join, else undefined; a kept last takes the new pieces,
 * so that kept ones compare as pointers next time.
 */
function keptResult<T>(last: Last<T> | undefined, pieces: string[], sep: string, head: string, tail: string): T | undefined {
  if (!last || last.sep !== sep || last.head !== head || last.tail !== tail) return undefined;
  const old = last.pieces;
  if (old.length !== pieces.length) return undefined;
  for (let i = 0; i < old.length; i++) if (old[i] !== pieces[i]) return undefined;
  last.pieces = pieces;
  return last.result;
}

/** head + pieces.join(sep) + tail; in a watcher, the last text under `key` while all of those are the same. */
export function keptJoin(key: string, pieces: string[], sep: string, head = '', tail = ''): string {
  if (!session.longLived) return head + pieces.join(sep) + tail;
  const last = lastJoins.get(key);
  const kept = keptResult(last, pieces, sep, head, tail);
  if (kept !== undefined) return kept;
  // Concatenated, not joined: the text is a rope over its pieces, made without copying them (an
  // edit of one family changes one of thousands); whoever reads it (the writer) flattens it once.
  let text = head;
  for (let i = 0; i < pieces.length; i++) text = i ? text + sep + pieces[i] : text + pieces[i];
  text += tail;
  lastJoins.set(key, { pieces, sep, head, tail, result: text });
  return text;
}

/**
 * keptJoin for a whole file, as pieces (pieces.ts) in a watcher: the aggregate documentation files
 * (docs/llms-full.txt, 12 MB at 8,200 operations; docs/search-index.json) reach the writer as their
 * family sections, so it encodes only the sections that changed and rewrites the file from the first
 * of them, instead of flattening and encoding 14 MB after every edit. Outside a watcher, the text.
 */
export function keptPieces(key: string, pieces: string[], sep: string, head = '', tail = ''): GeneratedText {
  if (!session.longLived) return head + pieces.join(sep) + tail;
  const last = lastPieced.get(key);
  const kept = keptResult(last, pieces, sep, head, tail);
  if (kept) return kept.file;
  const parts = [head];
  for (let i = 0; i < pieces.length; i++) {
    if (i) parts.push(sep);
    parts.push(pieces[i]!);
  }
  parts.push(tail);
  const cache = last?.result.cache ?? pieceCache();
  const file = cache(parts);
  lastPieced.set(key, { pieces, sep, head, tail, result: { file, cache } });
  return file;
}
