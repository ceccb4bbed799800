// A small Markdown-to-HTML renderer for our own generated documents (headings with ids, lists,
// paragraphs, tables, code spans, fenced code, links). It escapes everything first, so no input becomes markup; it is
// not a general Markdown implementation and only needs to cover what generator/ writes.
import { escapeHtml, page, type Viewer } from './html.ts';

/** A heading's anchor as the generator writes it (reference-family.md.hbs: `#tasksget` for tasks.get). */
export function headingId(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9_]/g, '');
}

function tableCells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.replace(/\\\|/g, '|').trim());
}

function inline(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\(((?:https?:\/\/|\/|#)[^)\s]*)\)/g, '<a href="$2">$1</a>');
}

export function markdownToHtml(markdown: string): string {
  const out: string[] = [];
  let list = false;
  let para: string[] = [];
  let fence: string[] | null = null;
  let table: string[][] | null = null;
  const flush = () => {
    if (para.length) out.push(`<p>${inline(para.join(' '))}</p>`);
    para = [];
    if (list) out.push('</ul>');
    list = false;
    if (table) {
      const [head, , ...rows] = table;
      out.push(
        `<div class="table"><table><thead><tr>${head!.map((c) => `<th>${inline(c)}</th>`).join('')}</tr></thead><tbody>${rows
          .map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`)
          .join('')}</tbody></table></div>`,
      );
    }
    table = null;
  };
  for (const line of markdown.replace(/<!--[\s\S]*?-->\n?/g, '').split('\n')) {
    if (fence) {
      if (line.startsWith('```')) {
        out.push(`<pre><code>${escapeHtml(fence.join('\n'))}</code></pre>`);
        fence = null;
      } else fence.push(line);
      continue;
    }
    if (line.startsWith('```')) {
      flush();
      fence = [];
      continue;
    }
    if (line.startsWith('|')) {
      if (!table) flush();
      (table ??= []).push(tableCells(line));
      continue;
    }
    if (table) flush();
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    const li = /^\s*[-*]\s+(.*)$/.exec(line);
    if (h) {
      flush();
      const id = h[1]!.length <= 2 ? headingId(h[2]!.replace(/`/g, '')) : ''; // h3s repeat per operation
      out.push(`<h${h[1]!.length}${id ? ` id="${id}"` : ''}>${inline(h[2]!)}</h${h[1]!.length}>`);
    } else if (li) {
      if (para.length) {
        out.push(`<p>${inline(para.join(' '))}</p>`);
        para = [];
      }
      if (!list) out.push('<ul>');
      list = true;
      out.push(`<li>${inline(li[1]!)}</li>`);
    } else if (line.trim() === '') flush();
    else if (list && /^\s+/.test(line)) out[out.length - 1] = out[out.length - 1]!.replace(/<\/li>$/, ` ${inline(line.trim())}</li>`);
    else {
      if (list) {
        out.push('</ul>');
        list = false;
      }
      para.push(line.trim());
    }
  }
  if (fence) out.push(`<pre><code>${escapeHtml(fence.join('\n'))}</code></pre>`);
  flush();
  return out.join('\n');
}

/** A portal page around rendered Markdown. */
export function htmlPage(title: string, body: string, options: { path?: string; viewer?: Viewer | null } = {}): string {
  return page({ title, body, ...options });
}

/** Whether the client asked for HTML before Markdown (a browser does, a program usually does not). */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  if (html < 0) return false;
  const md = accept.indexOf('text/markdown');
  return md < 0 || html < md;
}
