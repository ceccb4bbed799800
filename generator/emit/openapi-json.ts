// generated/openapi.json's text: the text of generatedJson (format.ts), composed from the texts of its
// path items and component schemas, in a watcher each kept while its object is the same one. At 8,200
// operations the document is 83 MB; a deep sorted copy and a stringify of all of it took 1.7-2.6 s of
// every re-emit, where one edited family changes a few hundred of its 16,000 pieces.
//
// Objects are memoised by identity: buildOpenApi hands back the same path item while its operations
// are the same (openapi.ts), and the model the same schema objects while their family and environment
// are (model.ts). Nothing in the compiler changes a document object after it is built.
import { identityMemo } from '../session.ts';
import { GENERATED_NOTE, sortedForJson } from './format.ts';
import { piece, Pieces, type GeneratedText, type Piece } from './pieces.ts';

type Doc = Record<string, unknown>;

/** A member's piece (`"key": text`, indented) by its object, while the object is under the same key. */
const pathItemPieces = identityMemo<object, { key: string; piece: Piece }>();
const schemaPieces = identityMemo<object, { key: string; piece: Piece }>();

const pad = (depth: number) => ' '.repeat(2 * depth);
const SEPARATOR = piece(',\n');

/** JSON.stringify(sortKeys(value), null, 2) as it reads `depth` levels down in the document. */
function plain(value: unknown, depth: number): string {
  const text = JSON.stringify(sortedForJson(value), null, 2);
  // split and join, not replaceAll: V8's replaceAll answers a tree of concatenated strings that every
  // later copy walks again.
  return depth ? text.split('\n').join(`\n${pad(depth)}`) : text;
}

/** An array index as a property name: JSON.stringify puts such keys first, in numeric order. */
const INDEX = /^(0|[1-9]\d*)$/;

/** Keys in the order JSON.stringify prints sortKeys's copy: integer keys ascending, then the rest sorted. */
function keysInPrintOrder(value: Doc): string[] {
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
  const isIndex = (k: string) => INDEX.test(k) && Number(k) < 2 ** 32 - 1;
  return [...keys.filter(isIndex).sort((a, b) => Number(a) - Number(b)), ...keys.filter((k) => !isIndex(k))];
}

const memberText = (key: string, depth: number, text: string) => `${pad(depth)}${JSON.stringify(key)}: ${text}`;

/** An object at `depth` whose members (at depth + 1) are the pieces `member` gives. */
function objectPieces(value: Doc, depth: number, member: (key: string, v: unknown) => Piece[]): Piece[] {
  const keys = keysInPrintOrder(value);
  if (!keys.length) return [piece('{}')];
  const out = [piece('{\n')];
  keys.forEach((key, i) => {
    if (i) out.push(SEPARATOR);
    out.push(...member(key, value[key]));
  });
  out.push(piece(`\n${pad(depth)}}`));
  return out;
}

const plainMember = (depth: number) => (key: string, v: unknown) => [piece(memberText(key, depth, plain(v, depth)))];

function memoisedMember(memo: typeof pathItemPieces, depth: number) {
  return (key: string, v: unknown): Piece[] => {
    if (!v || typeof v !== 'object') return plainMember(depth)(key, v);
    const known = memo.get(v);
    if (known && known.key === key) return [known.piece];
    return [memo.set(v, { key, piece: piece(memberText(key, depth, plain(v, depth))) }).piece];
  };
}

const isObject = (v: unknown): v is Doc => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * openapi.json as pieces, memoised in a watcher. A one-shot generate composes the same pieces (the
 * memos keep nothing outside a watcher): at 8,200 operations, one sorted copy and one stringify of the
 * 83 MB document, then one encoding of its two-byte text into an 83 MB buffer, cost 1.5-2.5 s more and
 * 230-370 MB more peak memory than per-path-item texts encoded piece by piece.
 */
export function openapiJson(doc: Doc): GeneratedText {
  const body = objectPieces(doc, 0, (key, value) => {
    if (key === 'paths' && isObject(value)) return [piece(`  "paths": `), ...objectPieces(value, 1, memoisedMember(pathItemPieces, 2))];
    if (key === 'components' && isObject(value))
      return [
        piece(`  "components": `),
        ...objectPieces(value, 1, (section, v) =>
          section === 'schemas' && isObject(v) ? [piece(`    "schemas": `), ...objectPieces(v, 2, memoisedMember(schemaPieces, 3))] : plainMember(2)(section, v),
        ),
      ];
    return plainMember(1)(key, value);
  });
  // withGeneratedNote's form: the note as the first member, then the body's members.
  const head = `{"x-svc-generated": ${JSON.stringify(GENERATED_NOTE)}`;
  if (body.length === 1) return `${head}\n}\n`;
  return new Pieces([piece(`${head},\n`), ...body.slice(1, -1), piece('\n}\n')]);
}
