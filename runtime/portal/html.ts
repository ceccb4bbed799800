// The portal's one look: a page shell (header with navigation and the signed-in state, main, footer)
// and one small stylesheet of our own served at /portal.css, readable on a phone and a laptop, light
// and dark (prefers-color-scheme). Pages load nothing else: no font, script or image from elsewhere.

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

export const STYLESHEET_PATH = '/portal.css';

export const STYLESHEET = `:root{color-scheme:light dark;--bg:#fdfdfc;--fg:#1d2126;--muted:#5b6570;--line:#d9dde2;--soft:#f1f3f5;--accent:#1f5fbf;--accent-fg:#fff;--warn:#a33b00;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.55;-webkit-text-size-adjust:100%}
@media (prefers-color-scheme:dark){:root{--bg:#15181c;--fg:#e6e8eb;--muted:#a0a8b2;--line:#313840;--soft:#1e2328;--accent:#7eb0ff;--accent-fg:#0d1116;--warn:#ffa36b}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg)}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.top{border-bottom:1px solid var(--line);background:var(--soft)}
.top nav{max-width:60rem;margin:0 auto;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.3rem 1rem;align-items:center}
.top .brand{font-weight:700;color:var(--fg);text-decoration:none;margin-right:auto}
.top a{text-decoration:none}
.top a[aria-current=page]{text-decoration:underline;text-underline-offset:.3em}
.top form{display:inline;margin:0}
main{max-width:60rem;margin:0 auto;padding:1.25rem 1rem 3rem}
footer{border-top:1px solid var(--line);color:var(--muted);font-size:.9rem}
footer div{max-width:60rem;margin:0 auto;padding:1rem;display:flex;flex-wrap:wrap;gap:.3rem 1rem}
h1{font-size:1.9rem;line-height:1.2;margin:.5rem 0 1rem}
h2{font-size:1.35rem;margin:2rem 0 .6rem;padding-top:.5rem;border-top:1px solid var(--line)}
h3{font-size:1.1rem;margin:1.5rem 0 .4rem}
p,li{max-width:46rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;background:var(--soft);padding:.05em .3em;border-radius:.25rem;overflow-wrap:anywhere}
pre{background:var(--soft);border:1px solid var(--line);border-radius:.4rem;padding:.75rem;overflow:auto;line-height:1.4}
pre code{background:none;padding:0;overflow-wrap:normal}
.table{overflow-x:auto;margin:1rem 0}
table{border-collapse:collapse;min-width:100%;font-size:.95rem}
th,td{border:1px solid var(--line);padding:.35rem .55rem;text-align:left;vertical-align:top}
th{background:var(--soft)}
.lede{font-size:1.15rem;color:var(--muted);max-width:46rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem;margin:1rem 0;padding:0;list-style:none}
.cards li{border:1px solid var(--line);border-radius:.5rem;padding:.9rem 1rem;background:var(--soft)}
.cards a{font-weight:600}
.muted{color:var(--muted)}
.button,button{display:inline-block;font:inherit;padding:.45rem 1rem;border-radius:.4rem;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);cursor:pointer;text-decoration:none}
.linkish{background:none;border:none;color:var(--accent);padding:0}
form.stack{display:grid;gap:.8rem;max-width:32rem}
form.stack label{display:grid;gap:.25rem;font-weight:600}
input,select,textarea{font:inherit;padding:.45rem .55rem;border:1px solid var(--line);border-radius:.35rem;background:var(--bg);color:var(--fg);width:100%}
textarea{min-height:6rem}
.notice{border-left:4px solid var(--accent);background:var(--soft);padding:.6rem .9rem;margin:1rem 0}
.error{border-left-color:var(--warn)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0}
#search-results{list-style:none;padding:0}
#search-results li{padding:.3rem 0;border-bottom:1px solid var(--line)}
@media (max-width:40rem){h1{font-size:1.5rem}main{padding:1rem .75rem 2rem}dl.facts{grid-template-columns:1fr}}
`;

export interface Viewer {
  /** Display name of the signed-in person. */
  name: string;
  kind: string;
  /** How the page was reached: a session cookie, or a bearer credential (a program). */
  via: 'session' | 'bearer';
}

const NAV: readonly [string, string][] = [
  ['/docs', 'Docs'],
  ['/reference', 'Reference'],
  ['/v1/docs', 'Interactive reference'],
  ['/changelog', 'Changelog'],
  ['/status', 'Status'],
];

/** A whole portal page: `body` is trusted HTML built by the portal; everything else is escaped. */
export function page(options: { title: string; body: string; path?: string; viewer?: Viewer | null; head?: string }): string {
  const { title, body, path = '', viewer = null } = options;
  const nav = NAV.map(([href, label]) => `<a href="${href}"${path === href || path.startsWith(`${href}/`) ? ' aria-current="page"' : ''}>${label}</a>`).join('');
  const account =
    viewer?.via === 'session'
      ? `<span class="muted">${escapeHtml(viewer.name)}</span><form method="post" action="/console/sign-out"><button class="linkish" type="submit">Sign out</button></form>`
      : viewer
        ? ''
        : `<a href="/console/sign-in${path && path !== '/' ? `?next=${encodeURIComponent(path)}` : ''}">Sign in</a>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${STYLESHEET_PATH}">${options.head ?? ''}
</head><body>
<header class="top"><nav aria-label="Portal"><a class="brand" href="/">svc developer portal</a>${nav}${account}</nav></header>
<main id="main">
${body}
</main>
<footer><div><a href="/security">Security</a><a href="/problems">Problem codes</a><a href="/llms.txt">llms.txt</a><a href="/request-access">Request access</a><a href="/health">Health</a></div></footer>
</body></html>
`;
}
