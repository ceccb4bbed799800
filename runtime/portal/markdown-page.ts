// A small Markdown-to-HTML renderer for our own generated documents (headings, lists, paragraphs,
// code spans, fenced code, links). It escapes everything first, so no input becomes markup; it is
// not a general Markdown implementation and only needs to cover what generator/ writes.
function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

function inline(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\(((?:https?:\/\/|\/)[^)\s]*)\)/g, '<a href="$2">$1</a>');
}

export function markdownToHtml(markdown: string): string {
  const out: string[] = [];
  let list = false;
  let para: string[] = [];
  let fence: string[] | null = null;
  const flush = () => {
    if (para.length) out.push(`<p>${inline(para.join(' '))}</p>`);
    para = [];
    if (list) out.push('</ul>');
    list = false;
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
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    const li = /^\s*[-*]\s+(.*)$/.exec(line);
    if (h) {
      flush();
      out.push(`<h${h[1]!.length}>${inline(h[2]!)}</h${h[1]!.length}>`);
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

export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><link rel="icon" href="data:,">
<style>:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}body{max-width:48rem;margin:0 auto;padding:1rem}code,pre{font-family:ui-monospace,monospace}pre{overflow:auto;background:#8881;padding:.5rem}</style>
</head><body>
${body}
</body></html>
`;
}

/** Whether the client asked for HTML before Markdown (a browser does, a program usually does not). */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  if (html < 0) return false;
  const md = accept.indexOf('text/markdown');
  return md < 0 || html < md;
}
