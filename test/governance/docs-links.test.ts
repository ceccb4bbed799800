// The README and docs/ link to each other by relative paths and #anchors (issue 27 split the README
// into pages); a moved page or a renamed heading must not leave a link pointing nowhere.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const PAGES = ['README.md', 'contract/README.md', 'generator/README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading.replace(/^#+\s*/, '').trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
}

function withoutCode(text: string): string {
  return text.replace(/^```[\s\S]*?^```$/gm, '');
}

function anchors(file: string): Set<string> {
  return new Set(withoutCode(readFileSync(file, 'utf8')).split('\n').filter((l) => /^#+ /.test(l)).map(anchorOf));
}

describe('links between the README and docs/', () => {
  it('anchors follow GitHub', () => {
    expect(anchorOf('### The life of a change (within /v1)')).toBe('the-life-of-a-change-within-v1');
    expect(anchorOf('## For clients: five minutes')).toBe('for-clients-five-minutes');
  });

  it.each(PAGES)('%s: every relative link and anchor resolves', (page) => {
    const text = withoutCode(readFileSync(path.join(ROOT, page), 'utf8'));
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target) || target.startsWith('/')) continue;
      const [file, anchor] = target.split('#');
      const dest = file ? path.join(ROOT, path.dirname(page), file) : path.join(ROOT, page);
      if (!existsSync(dest)) broken.push(`${target}: no such file`);
      else if (anchor && dest.endsWith('.md') && !anchors(dest).has(anchor)) broken.push(`${target}: no such heading`);
    }
    expect(broken).toEqual([]);
  });
});
