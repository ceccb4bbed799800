// GET /v1/docs: the interactive reference of the whole registry (public page).
// Rendered by Redoc (pinned in package.json) whose standalone bundle the server itself serves from
// node_modules at /v1/docs/assets/redoc.standalone.js: no CDN, the page works offline.
// The OpenAPI document needs a bearer credential, never in a URL: the page asks for a key or token,
// keeps it in a JavaScript variable only (no storage, no cookie), fetches /v1/openapi.json with
// `Authorization: Bearer`, renders it with the x-svc-* extensions shown, and its "Try it" panel
// calls the API with the same header.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Hono } from 'hono';
import type { AppEnv } from '../http/app-env.ts';

const require = createRequire(import.meta.url);
let bundle: string | undefined;
function redocBundle(): string {
  // Redoc's sidebar footer loads its logo from cdn.redoc.ly; the page must not reach outside this
  // server, so that one image is replaced by an empty inline SVG.
  bundle ??= readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8').replaceAll(
    'https://cdn.redoc.ly/redoc/logo-mini.svg',
    'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E',
  );
  return bundle;
}

export const REFERENCE_ASSET = '/v1/docs/assets/redoc.standalone.js';

export function referencePage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc — interactive reference</title>
<link rel="icon" href="data:,">
<style>
:root{color-scheme:light dark;font-family:system-ui,sans-serif}
body{margin:0}
#sign{max-width:32rem;margin:3rem auto;padding:1rem}
#sign input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
#sign button,#try button{padding:.4rem 1rem;font:inherit;margin-top:.5rem}
#bar{display:none;position:sticky;top:0;z-index:20;background:Canvas;border-bottom:1px solid #8884;padding:.4rem 1rem;align-items:center;gap:.5rem;flex-wrap:wrap}
#bar a{color:inherit;font-weight:600;text-decoration:none}
#try{position:relative}
#try summary{cursor:pointer;padding:.3rem .6rem;border:1px solid #8886;border-radius:.3rem}
#try-panel{position:absolute;left:0;top:calc(100% + .4rem);width:min(46rem,calc(100vw - 2rem));max-height:70vh;overflow:auto;background:Canvas;border:1px solid #8886;border-radius:.3rem;padding:.75rem;box-shadow:0 .5rem 1.5rem #0004}
#try select,#try input,#try textarea{font:inherit;max-width:100%}
#try textarea{width:100%;min-height:4rem;box-sizing:border-box}
#try-result{white-space:pre-wrap;max-height:40vh;overflow:auto;background:#8881;padding:.5rem}
#error{color:#c00}
</style></head>
<body>
<form id="sign">
<h1>svc interactive reference</h1>
<p>The OpenAPI document needs a credential. Paste an API key or an access token; it stays in this page's memory only and is sent as <code>Authorization: Bearer</code>.</p>
<label for="key">API key or token</label>
<input id="key" name="key" type="password" autocomplete="off" required>
<button type="submit">Show the reference</button>
<p id="error" role="alert"></p>
</form>
<header id="bar">
<a href="/">svc</a>
<details id="try">
<summary>Try it</summary>
<div id="try-panel" aria-label="Try it">
<select id="try-op" aria-label="Operation"></select>
<input id="try-path" aria-label="Path" size="50">
<button id="try-send" type="button">Send</button>
<textarea id="try-body" aria-label="JSON body (for POST, PATCH, PUT)" placeholder="JSON body"></textarea>
<pre id="try-result" aria-live="polite"></pre>
</div>
</details>
</header>
<div id="reference"></div>
<script src="${REFERENCE_ASSET}"></script>
<script>
(function () {
  var credential = null;
  var ops = [];
  function $(id) { return document.getElementById(id); }
  $('sign').addEventListener('submit', function (e) {
    e.preventDefault();
    credential = $('key').value.trim();
    $('key').value = '';
    fetch('/v1/openapi.json', { headers: { Authorization: 'Bearer ' + credential } }).then(function (res) {
      return res.json().then(function (body) { return { res: res, body: body }; });
    }).then(function (r) {
      if (!r.res.ok) { credential = null; $('error').textContent = (r.body && r.body.detail) || 'The credential was refused.'; return; }
      $('sign').style.display = 'none';
      showTry(r.body);
      // The bar stays on top (sticky); Redoc's sticky sidebar and its scrolling start below it, so
      // the menu is never pushed under Redoc's fixed footer (it was, with a tall bar above Redoc).
      Redoc.init(r.body, { showExtensions: true, hideDownloadButton: true, nativeScrollbars: true, disableSearch: false, scrollYOffset: '#bar' }, $('reference'));
    }).catch(function () { $('error').textContent = 'The service does not answer.'; });
  });
  function showTry(doc) {
    var select = $('try-op');
    Object.keys(doc.paths).forEach(function (path) {
      Object.keys(doc.paths[path]).forEach(function (method) {
        var o = doc.paths[path][method];
        if (!o || !o.operationId) return;
        ops.push({ id: o.operationId, method: method.toUpperCase(), path: path });
        var opt = document.createElement('option');
        opt.value = String(ops.length - 1);
        opt.textContent = o.operationId + ' — ' + method.toUpperCase() + ' ' + path;
        select.appendChild(opt);
      });
    });
    select.addEventListener('change', pick);
    pick();
    $('bar').style.display = 'flex';
  }
  function pick() {
    var o = ops[Number($('try-op').value)];
    $('try-path').value = o.path;
    $('try-body').value = '';
    $('try-body').disabled = o.method === 'GET' || o.method === 'DELETE';
  }
  $('try-send').addEventListener('click', function () {
    var o = ops[Number($('try-op').value)];
    var headers = { Authorization: 'Bearer ' + credential };
    var init = { method: o.method, headers: headers };
    if (!$('try-body').disabled && $('try-body').value.trim()) { headers['Content-Type'] = 'application/json'; init.body = $('try-body').value; }
    if (o.method !== 'GET') headers['Idempotency-Key'] = (crypto.randomUUID && crypto.randomUUID()) || String(Date.now());
    $('try-result').textContent = 'Sending…';
    fetch($('try-path').value, init).then(function (res) {
      return res.text().then(function (text) {
        var shown = text;
        try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (_) {}
        $('try-result').textContent = res.status + ' ' + res.statusText + '\\n' + shown;
      });
    }).catch(function (err) { $('try-result').textContent = String(err); });
  });
})();
</script>
</body></html>
`;
}

export function mountReference(app: Hono<AppEnv>): void {
  app.get('/v1/docs', (c) => c.html(referencePage()));
  app.get(REFERENCE_ASSET, () =>
    new Response(redocBundle(), { headers: { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=3600' } }),
  );
}
