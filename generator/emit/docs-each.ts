// The templates' `{{#each}}` over the families, in a watcher (docs.ts): each family's block is kept
// by the family's view, and a page's families are spliced, block by block, into the rest of the page,
// so an emit renders only the blocks of the families that changed and finishes (collapses blank
// lines in) only those and the rest of the page. The text is the one the whole render gives.
import type Handlebars from 'handlebars';
import { keptJoin } from './family-memo.ts';

/** One item's text as an `{{#each}}` block rendered it: the block (its program number) and the item's position. */
interface ItemText {
  program: unknown;
  index: number;
  last: boolean;
  text: string;
  /** `text` finished (docs.ts collapse), when a splice needed it. */
  finished?: string;
}

/**
 * Where a list's `{{#each}}` keeps each item's text: on the item itself, under a symbol of its own
 * (the items are docs.ts's family views, kept while their family is, and no template reads a symbol).
 */
export interface ItemMemo {
  get(item: object): ItemText | undefined;
  set(item: object, text: ItemText): ItemText;
}

export function eachMemo(): ItemMemo {
  const key = Symbol('each text');
  return {
    get: (item) => (item as Record<symbol, ItemText | undefined>)[key],
    set: (item, text) => {
      Object.defineProperty(item, key, { value: text, configurable: true, enumerable: false, writable: true });
      return text;
    },
  };
}

const MEMO = Symbol('each memo');
type MemoList<T> = T[] & { [MEMO]?: ItemMemo };

/**
 * A list whose `{{#each}}` keeps each item's text in `memo`, by the item's identity. A block's text
 * is a function of its item and its position (@index, @key, @first, @last and block parameters all
 * derive from the index and whether it is the last), as long as it reads nothing outside the item:
 * pass only a template whose source has no `../` and no `@root` (memoable).
 */
export function memoList<T extends object>(items: T[], memo: ItemMemo): T[] {
  return Object.assign([...items], { [MEMO]: memo }) as MemoList<T>;
}

/** Whether a template's blocks read only their own item (no parent context, no root). */
export function memoable(source: string): boolean {
  return !/\.\.\/|@root/.test(source);
}

/** How many newlines (up to 3) `text` has from `at` on, going `step` (1: forwards, -1: backwards). */
function newlines(text: string, at: number, step: 1 | -1): number {
  let n = 0;
  for (let i = at; n < 3 && i >= 0 && i < text.length && text.charCodeAt(i) === 10; i += step) n++;
  return n;
}

/** During renderSpliced: each memoList's item texts, in the order their blocks ran (the marker's number). */
let collecting: ItemText[][] | null = null;
const MARK = '\u0000svc-each-';
const marker = (k: number) => `${MARK}${k}\u0000`;

/**
 * Replaces hb's `each` with one that serves a memoList's items from its memo (during renderSpliced it
 * hands back a marker and keeps the texts) and delegates everything else.
 */
export function registerMemoEach(hb: typeof Handlebars): void {
  const builtin = hb.helpers.each!;
  hb.registerHelper('each', function (this: unknown, context: unknown, options: Handlebars.HelperOptions) {
    const memo = Array.isArray(context) ? (context as MemoList<object>)[MEMO] : undefined;
    if (!memo) return builtin.call(this, context, options);
    const list = context as object[];
    const block = options.fn as Handlebars.TemplateDelegate & { program?: unknown };
    const valid = (known: ItemText | undefined, i: number): known is ItemText =>
      known !== undefined && known.program === block.program && known.index === i && known.last === (i === list.length - 1);
    const texts: ItemText[] = new Array<ItemText>(list.length);
    const missing: number[] = [];
    for (let i = 0; i < list.length; i++) {
      const known = memo.get(list[i]!);
      if (valid(known, i)) texts[i] = known;
      else missing.push(i);
    }
    // An empty list renders the block's {{else}}, as the builtin does.
    if (!list.length) return builtin.call(this, context, options);
    if (missing.length) {
      // The builtin renders the items whose text is not kept: given the list with the others left
      // out (holes, which it skips), it gives each item its data frame and block parameters as in
      // the whole list, and calls fn for each, in order.
      const sparse = new Array<object>(list.length);
      for (const i of missing) sparse[i] = list[i]!;
      let next = 0;
      const fn = (item: object, runtime?: Handlebars.RuntimeOptions) => {
        const i = missing[next++]!;
        return (texts[i] = memo.set(item, { program: block.program, index: i, last: i === list.length - 1, text: block(item, runtime) })).text;
      };
      builtin.call(this, sparse, { ...options, fn: fn as Handlebars.TemplateDelegate });
    }
    // The builtin's text is its items' texts one after the other.
    if (!collecting) return texts.map((t) => t.text).join('');
    collecting.push(texts);
    return marker(collecting.length - 1);
  });
}

/**
 * `finish(template(view))`, the page's memoLists' blocks spliced in: the rest of the page is rendered
 * with a marker in each list's place, and the page is the finished rest with each block's finished
 * text between, joined once (kept by `key`: family-memo.ts keptJoin). `finish` must be collapse, then
 * trimEnd, then one newline, where collapse(a + b) is collapse(a) + collapse(b) unless a ends and b
 * starts with a newline (docs.ts). Any other case (a marker not found once, two pieces meeting at
 * newlines) renders the whole page.
 */
export function renderSpliced(key: string, template: HandlebarsTemplateDelegate, view: unknown, collapse: (raw: string) => string): string {
  const whole = () => `${collapse(template(view)).trimEnd()}\n`;
  collecting = [];
  let rest: string;
  let lists: ItemText[][];
  try {
    rest = template(view);
    lists = collecting;
  } finally {
    collecting = null;
  }
  // The rest, cut at the markers (each must be found once, and no other text look like one).
  const frame: string[] = [];
  for (let k = 0; k < lists.length; k++) {
    const at = rest.indexOf(marker(k));
    if (at < 0) return whole();
    frame.push(rest.slice(0, at));
    rest = rest.slice(at + marker(k).length);
  }
  frame.push(rest);
  if (frame.some((text) => text.includes(MARK))) return whole();
  const pieces: string[] = [];
  for (let k = 0; k < frame.length; k++) {
    pieces.push(collapse(frame[k]!));
    const items = lists[k] ?? [];
    for (let i = 0; i < items.length; i++) pieces.push((items[i]!.finished ??= collapse(items[i]!.text)));
  }
  // Where two pieces meet, the newlines ending one and those starting the next make one run: collapse
  // leaves it as the two pieces' collapses leave it when one of them is empty or both are single
  // newlines (a blank line), and not otherwise. The trailing white space is trimmed from the last
  // piece that has more, and the pieces after it (white space only) dropped.
  let run = 0; // newlines ending the pieces so far
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!;
    const lead = newlines(p, 0, 1);
    if (run && lead && (run > 1 || lead > 1)) return whole();
    run = lead === p.length ? run + lead : newlines(p, p.length - 1, -1);
  }
  let end = pieces.length - 1;
  while (end >= 0 && pieces[end]!.trimEnd() === '') end--;
  if (end < 0) return '\n';
  const kept = pieces.slice(0, end + 1);
  kept[end] = kept[end]!.trimEnd();
  return keptJoin(key, kept, '', '', '\n');
}
