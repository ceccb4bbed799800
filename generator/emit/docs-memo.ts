// What lets emitDocs (docs.ts) re-render, in a watcher, only what an edit changed: an `{{#each}}`
// whose items' texts are kept by identity, the static tools/list's size summed from each tool's, and
// search-index.json joined from each family's entries. Each gives what its whole computation gives;
// outside a watcher docs.ts does not use them (test/generator/incremental.test.ts compares the two).
import type Handlebars from 'handlebars';
import type { McpToolDef } from '../../runtime/contract-types.ts';
import { listBytes } from '../mcp-dynamic.ts';
import { generatedJson, sortKeys } from './format.ts';
import { identityMemo, type IdentityMemo } from '../session.ts';

/** One item's text as an `{{#each}}` block rendered it: the block (its program number) and the item's position. */
interface ItemText {
  program: unknown;
  index: number;
  last: boolean;
  text: string;
}

const MEMO = Symbol('each memo');
type MemoList<T> = T[] & { [MEMO]?: IdentityMemo<object, ItemText> };

/**
 * A list whose `{{#each}}` keeps each item's text in `memo`, by the item's identity. A block's text
 * is a function of its item and its position (@index, @key, @first, @last and block parameters all
 * derive from the index and whether it is the last), as long as it reads nothing outside the item:
 * pass only a template whose source has no `../` and no `@root` (memoable).
 */
export function memoList<T extends object>(items: T[], memo: IdentityMemo<object, ItemText>): T[] {
  return Object.assign([...items], { [MEMO]: memo }) as MemoList<T>;
}

export function eachMemo(): IdentityMemo<object, ItemText> {
  return identityMemo<object, ItemText>();
}

/** Whether a template's blocks read only their own item (no parent context, no root). */
export function memoable(source: string): boolean {
  return !/\.\.\/|@root/.test(source);
}

/** Replaces hb's `each` with one that serves a memoList's items from its memo and delegates everything else. */
export function registerMemoEach(hb: typeof Handlebars): void {
  const builtin = hb.helpers.each!;
  hb.registerHelper('each', function (this: unknown, context: unknown, options: Handlebars.HelperOptions) {
    const memo = Array.isArray(context) ? (context as MemoList<object>)[MEMO] : undefined;
    if (!memo) return builtin.call(this, context, options);
    const list = context as object[];
    const block = options.fn as Handlebars.TemplateDelegate & { program?: unknown };
    let index = 0;
    // The builtin calls fn once per item, in order (a memoList is dense).
    const fn = (item: object, runtime?: Handlebars.RuntimeOptions) => {
      const i = index++;
      const last = i === list.length - 1;
      const known = memo.get(item);
      if (known && known.program === block.program && known.index === i && known.last === last) return known.text;
      return memo.set(item, { program: block.program, index: i, last, text: block(item, runtime) }).text;
    };
    return builtin.call(this, context, { ...options, fn: fn as Handlebars.TemplateDelegate });
  });
}

/**
 * listBytes of every tool, in a watcher: the whole is one JSON document holding the tools as an
 * array, so its bytes are the empty list's, plus each tool's (listBytes([tool]) less the empty
 * list's, kept by the tool definition's identity: model.ts keeps it while its operation is the same),
 * plus a comma between two.
 */
const toolBytes = identityMemo<McpToolDef, number>();
export function staticListBytes(tools: readonly McpToolDef[]): number {
  const empty = listBytes([]);
  let total = empty;
  for (const tool of tools) total += toolBytes.get(tool) ?? toolBytes.set(tool, listBytes([tool]) - empty);
  return total + Math.max(0, tools.length - 1);
}

const PLACEHOLDER = 'svc:entries';

/**
 * One entry of `{entries: [...]}` as generatedJson writes it: its sorted-keys JSON, indented as an
 * element of that array (JSON.stringify indents by depth alone).
 */
export function entryJson(entry: Record<string, unknown>): string {
  return JSON.stringify(sortKeys(entry), null, 2).replaceAll('\n', '\n    ');
}

/** generatedJson({entries}) from each entry's entryJson (entries joined in order; pieces may hold several, joined already). */
export function entriesJson(pieces: string[]): string {
  const frame = generatedJson({ entries: [PLACEHOLDER] });
  const joined = pieces.filter((p) => p !== '').join(',\n    ');
  if (joined === '') return generatedJson({ entries: [] });
  return frame.replace(JSON.stringify(PLACEHOLDER), () => joined);
}
