// What lets emitDocs (docs.ts) compute, in a watcher, the documents' totals and search-index.json
// from each family's part: the static tools/list's size summed from each family's tools, and the
// index joined from each family's entries (docs-each.ts does the same for the templates' blocks).
// Each gives what its whole computation gives; outside a watcher docs.ts does not use them
// (test/generator/incremental.test.ts compares the two).
import type { McpToolDef } from '../../runtime/contract-types.ts';
import { listBytes } from '../mcp-dynamic.ts';
import { keptPieces } from './family-memo.ts';
import type { GeneratedText } from './pieces.ts';
import { generatedJson, sortedForJson } from './format.ts';

/**
 * listBytes of every tool, in a watcher, from each family's tools: the whole is one JSON document
 * holding the tools as an array, so its bytes are the empty list's, plus each tool's (listBytes([tool])
 * less the empty list's), plus a comma between two.
 */
export function toolsBytes(tools: readonly McpToolDef[]): number {
  const empty = listBytes([]);
  let total = 0;
  for (const tool of tools) total += listBytes([tool]) - empty;
  return total;
}

/** listBytes of `count` tools whose toolsBytes add up to `bytes`. */
export function listBytesOf(count: number, bytes: number): number {
  return listBytes([]) + bytes + Math.max(0, count - 1);
}

const PLACEHOLDER = 'svc:entries';

/**
 * One entry of `{entries: [...]}` as generatedJson writes it: its sorted-keys JSON, indented as an
 * element of that array (JSON.stringify indents by depth alone).
 */
export function entryJson(entry: Record<string, unknown>): string {
  return JSON.stringify(sortedForJson(entry), null, 2).replaceAll('\n', '\n    ');
}

/** The text generatedJson({entries}) gives around its entries (the same on every call). */
let frame: { head: string; tail: string } | undefined;

/** generatedJson({entries}) from each entry's entryJson, in order (a piece may hold several, joined already). */
export function entriesJson(pieces: string[]): GeneratedText {
  const entries = pieces.filter((p) => p !== '');
  if (!entries.length) return generatedJson({ entries: [] });
  if (!frame) {
    const text = generatedJson({ entries: [PLACEHOLDER] });
    const at = text.indexOf(JSON.stringify(PLACEHOLDER));
    frame = { head: text.slice(0, at), tail: text.slice(at + JSON.stringify(PLACEHOLDER).length) };
  }
  return keptPieces('docs/search-index.json', entries, ',\n    ', frame.head, frame.tail);
}
