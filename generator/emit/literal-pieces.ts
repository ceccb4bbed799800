// What a watcher's emitters put their files together from: the texts they keep (session.ts identity
// memos) of each operation, family or schema, joined again each compile.
//
// A large literal (format.ts `literal`) from the texts of its entries: each function here yields
// exactly what `literal` yields for the whole value, JSON.stringify's layout with an indent of 2, an
// entry's text being `literal(entry, 2)` (its nested lines indented one level deeper; JSON text holds
// no newline but those of its layout).
//
// Each kept text is one flat string (one JSON.stringify, sliced or joined), and a file is their
// concatenation, not their join: V8 keeps it as a rope of the kept texts, copied once into one string
// when it is first read (compared, hashed or written). A join would copy them here and the writer
// copy the file's text once more.
import type { FamilyModel, Model } from '../model.ts';
import { sortedForJson } from './format.ts';

/**
 * model.families when model.operations is their operations one family after the other, so that a
 * file may be put together from what it keeps of each family; else null. It is so while every id
 * starts with its family's name and a dot (check.ts), model.operations being sorted by id and
 * model.families by name; checked each compile, operation by operation (no lookups).
 */
export function operationsByFamily(model: Model): readonly FamilyModel[] | null {
  const { operations } = model;
  let at = 0;
  for (const family of model.families)
    for (const op of family.operations) if (operations[at++] !== op) return null;
  return at === operations.length ? model.families : null;
}

/** What separates two elements (or members) of a literal at the top level. */
export const SEPARATOR = ',\n  ';

/**
 * The elements of `literal(values)` between its `[\n  ` and `\n]`: `literal(value, 2)` of each, SEPARATOR
 * between (values not empty, none undefined). One JSON.stringify, the lines not split.
 */
export function elementsText(values: readonly unknown[]): string {
  return JSON.stringify(values.map(sortedForJson), null, 2).slice(4, -2);
}

/** texts.join(separator), as a rope. */
export function concat(texts: readonly string[], separator: string): string {
  let out = texts.length ? texts[0]! : '';
  for (let i = 1; i < texts.length; i++) out = out + separator + texts[i]!;
  return out;
}

/** `literal(array)` from elementsText of its elements, whole or in consecutive runs (none empty). */
export function arrayLiteral(runs: readonly string[]): string {
  return arrayParts(runs).join('');
}

/** arrayLiteral's text as its parts (the runs, the separators, the brackets): a watcher writes a file from them. */
export function arrayParts(runs: readonly string[]): string[] {
  return runs.length ? ['[\n  ', ...interleave(runs, SEPARATOR), '\n]'] : ['[]'];
}

function interleave(texts: readonly string[], separator: string): string[] {
  const out: string[] = [];
  texts.forEach((text, i) => (i ? out.push(separator, text) : out.push(text)));
  return out;
}

/** One member of a record's literal: its key and `"key": literal(value, 2)`. */
export interface Member {
  key: string;
  text: string;
}

/** The member of `literal(record)` of key and value (value not undefined), as one flat string. */
export function member(key: string, value: unknown): Member {
  return { key, text: [JSON.stringify(key), ': ', elementsText([value])].join('') };
}

const byKey = (a: Member, b: Member) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * `literal(record)` from its members (those whose value is undefined left out, as sortKeys does;
 * keys distinct), in any order. They are put in the order `literal` gives them: sortKeys inserts the
 * keys sorted into a new object, and JSON.stringify then lists that object's array-index keys ("0",
 * "12") first, in numeric order, the others in insertion order. A "__proto__" key is never among
 * them: sortKeys's assignment sets the copy's prototype instead.
 */
export function recordLiteral(members: readonly Member[]): string {
  return recordLiteralParts(members).join('');
}

/** recordLiteral's text as its parts. */
export function recordLiteralParts(members: readonly Member[]): string[] {
  if (inLiteralOrder(members.map((m) => m.key))) return recordParts(members.map((m) => m.text));
  const sorted = members.filter((m) => m.key !== '__proto__').sort(byKey);
  const indices = sorted.filter((m) => isArrayIndex(m.key)).sort((a, b) => Number(a.key) - Number(b.key));
  return recordParts([...indices, ...sorted.filter((m) => !isArrayIndex(m.key))].map((m) => m.text));
}

/** Whether distinct keys are in the order recordLiteral puts them: sorted, none an array index or "__proto__". */
export function inLiteralOrder(keys: readonly string[]): boolean {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if ((i > 0 && !(keys[i - 1]! < key)) || isArrayIndex(key) || key === '__proto__') return false;
  }
  return true;
}

/** `literal(record)` from its members' texts, in that order. */
export function recordText(memberTexts: readonly string[]): string {
  return recordParts(memberTexts).join('');
}

/** recordText's text as its parts. */
export function recordParts(memberTexts: readonly string[]): string[] {
  return memberTexts.length ? ['{\n  ', ...interleave(memberTexts, SEPARATOR), '\n}'] : ['{}'];
}

/** A key an object keeps among its array indices: a canonical integer from 0 to 2^32 - 2. */
function isArrayIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 48 && first <= 57 && /^(0|[1-9]\d{0,9})$/.test(key) && Number(key) < 2 ** 32 - 1;
}
