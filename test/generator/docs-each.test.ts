// docs-each.ts: a watcher's `{{#each}}` over a memoList keeps each item's block and splices the
// blocks into the rest of the page. Whatever the template (blank lines where blocks meet, @index,
// @first and @last, an {{else}}, a list iterated twice, trailing white space, text that looks like a
// marker) and however the list changes between renders (an item replaced, added, removed), the page
// must be the one the whole render gives.
import Handlebars from 'handlebars';
import { afterAll, describe, expect, it } from 'vitest';
import { eachMemo, memoable, memoList, registerMemoEach, renderSpliced } from '../../generator/emit/docs-each.ts';
import { forgetSessionMemos, session } from '../../generator/session.ts';

const hb = Handlebars.create();
registerMemoEach(hb);
const collapse = (text: string) => text.replace(/\n{3,}/g, '\n\n');

/** Templates, and whether every render of theirs is spliced (the others' blocks meet at runs of blank lines: rendered whole). */
const TEMPLATES: Record<string, [string, boolean]> = {
  list: ['# head\n\n{{#each items}}\n- {{name}}: {{text}}\n{{/each}}\n\n## tail\n', true],
  positions: ['{{#each items}}{{@index}}{{#if @first}} first{{/if}}{{#if @last}} last{{/if}} {{name}}\n{{/each}}end', true],
  empty: ['x\n{{#each items}}{{name}}{{else}}none{{/each}}\ny', true],
  blanks: ['a\n\n\n{{#each items}}\n\n{{name}}\n\n\n{{text}}\n{{/each}}\n\n\nb\n\n  \n', false],
  twice: ['{{#each items}}{{name}}\n{{/each}}\n\n\n{{#each items}}<{{name}}>\n\n\n{{/each}}', false],
  trailing: ['top\n{{#each items}}{{name}}{{text}}   \n\n{{/each}}', false],
};

type Item = { name: string; text: string };
const item = (name: string, text = '') => ({ name, text });

/** The lists one page is rendered with, one after another: items kept, replaced, added and removed. */
function sequences(): Item[][] {
  const a = item('a');
  const b = item('b', 'ends with a blank line\n\n');
  const c = item('\nc', 'starts with a newline');
  const d = item('d', '\n\n\nmany newlines\n\n\n');
  const e = item('e', '\u0000svc-each-0\u0000 looks like a marker');
  return [[a, b, c], [a, b, c], [a, item('b2'), c], [a, b, d, c], [d, b, c], [c], [], [a, b, c, d, e], [a, b, c, d, e]];
}

afterAll(() => {
  session.longLived = false;
  forgetSessionMemos();
});

describe('a memoList spliced into its page', () => {
  for (const [name, [source, splicedAlways]] of Object.entries(TEMPLATES)) {
    it(`gives the whole render's page: ${name}`, () => {
      session.longLived = true;
      expect(memoable(source)).toBe(true);
      const compiled = hb.compile(source, { noEscape: true, strict: false });
      let renders = 0;
      const template = (view: unknown) => (renders++, compiled(view));
      const memo = eachMemo();
      let spliced = 0;
      for (const items of sequences()) {
        const whole = `${collapse(compiled({ items })).trimEnd()}\n`;
        renders = 0;
        expect(renderSpliced(`test/${name}`, template, { items: memoList(items, memo) }, collapse)).toBe(whole);
        if (renders === 1) spliced++; // else the whole page was rendered again
      }
      if (splicedAlways) expect(spliced).toBe(sequences().length);
    });
  }

  it('only for templates whose blocks read nothing outside their item', () => {
    expect(memoable('{{#each items}}{{../title}}{{/each}}')).toBe(false);
    expect(memoable('{{#each items}}{{@root.title}}{{/each}}')).toBe(false);
    expect(memoable(TEMPLATES.list![0])).toBe(true);
  });
});
