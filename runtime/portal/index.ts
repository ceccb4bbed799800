// The developer portal (spec, cross-cutting rule 7), rendered from the generated documents
// (generated/docs/: guides, reference pages, llms-full.txt, search-index.json) with one stylesheet.
//
// Public: /, /operators, /client-admins (audience pages), /docs (overview), /security, /status (live),
//   /health, /problems and /problems/<code> (HTML, Markdown or JSON by Accept), /request-access.
// Signed in (a portal session, or a bearer credential for programs): /connect, /docs/<guide>,
//   /reference and /reference/<family>, /openapi.json, /llms-full.txt, /agent-guide.md,
//   /search-index.json. Without either, a browser (Accept: text/html) is redirected to
//   /console/sign-in?next=<page>; a program gets 401 unauthorized with sign_in and request_access.
// Operators: /console/access-requests (the requests to review).
// Sign-in and sessions: sign-in.ts, sessions.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { desc } from 'drizzle-orm';
import type { Context, Hono } from 'hono';
import type { Config } from '../config.ts';
import { DEFAULT_API_VERSION_HEADER, type OperationDef, type RuntimeService } from '../contract-types.ts';
import type { Database } from '../data/client.ts';
import { accessRequests } from '../data/schema.ts';
import type { Principal } from '../handler-types.ts';
import { newId } from '../data/ids.ts';
import type { AppEnv, RequestAuthenticator } from '../http/app-env.ts';
import { ProblemError } from '../problem-error.ts';
import { isProblemCode, problemCodes, problemDef, retryable, type ProblemCode } from '../problem-documents.ts';
import { problemResponse } from '../http/rest/problem-response.ts';
import { escapeHtml, page, STYLESHEET, STYLESHEET_PATH, type Viewer } from './html.ts';
import { markdownToHtml } from './markdown-page.ts';
import { SessionStore } from './sessions.ts';
import { mountSignIn, type PortalOidcConfig } from './sign-in.ts';
import { PROJECT_ROOT } from '../project-root.ts';
import { readinessResponse, type Readiness } from '../observability/health.ts';

export { portalOidcFromEnv, type PortalOidcConfig } from './sign-in.ts';

/** This repository's generated documents: the default when the registry names no generated folder. */
const DEFAULT_DOCS_DIR = new URL('generated/docs/', PROJECT_ROOT);

interface IndexEntry {
  kind: 'guide' | 'family' | 'operation';
  title: string;
  url: string;
  text: string;
}

export interface PortalDeps {
  config: Config;
  service: RuntimeService;
  database: Database;
  /** What /health reports, as /v1/health (runtime/observability/health.ts). */
  readiness: Readiness;
  operations: readonly OperationDef[];
  /** The request's bearer credential -> principal (as the API; throws a 401 problem). */
  authenticate: RequestAuthenticator;
  /** An Authorization value -> principal (the demo's API-key sign-in). */
  authenticateBearer(authorization: string, ip: string | null): Promise<Principal>;
  clientIp(c: Context<AppEnv>): string | null;
  /** The OpenAPI document as served (servers set to this service), built on first use. */
  openapi: () => string;
  /** The portal's identity provider; null: API-key sign-in (the demo). */
  oidc: PortalOidcConfig | null;
  now?: () => Date;
  /** The contract's generated docs/ folder (a file URL ending in /); default this repository's generated/docs/. */
  docsDir?: URL;
}

const RETRY_TEXT = {
  after_fix: 'Only after a fix: the same request fails the same way until the request, the credential or the resource changes.',
  after_delay: 'Retry after a delay: wait for the Retry-After value, then send the same request again.',
  now: 'Retry now: the same request may succeed at once; quote the requestId if it keeps failing.',
} as const;

function wants(c: Context, type: string): boolean {
  return (c.req.header('accept') ?? '').includes(type);
}

export function mountPortal(app: Hono<AppEnv>, deps: PortalDeps): void {
  const { config, service, database } = deps;
  const base = config.baseUrl;
  const docsDir = deps.docsDir ?? DEFAULT_DOCS_DIR;
  const read = (path: string) => readFileSync(new URL(path, docsDir), 'utf8');
  const sessions = new SessionStore(database.db, deps.now);
  const withBase = (md: string) => md.replaceAll('{base_url}', base);

  const guides = (JSON.parse(read('search-index.json')) as { entries: IndexEntry[] }).entries;
  const guideList = guides.filter((e) => e.kind === 'guide');
  const familyList = guides.filter((e) => e.kind === 'family');
  const guideMarkdown = Object.fromEntries(guideList.map((g) => [g.url.slice('/docs/'.length), withBase(read(`guides/${g.url.slice('/docs/'.length)}.md`))]));
  const references = Object.fromEntries(
    readdirSync(new URL('reference/', docsDir))
      .filter((f) => f.endsWith('.md'))
      .map((f) => [f.slice(0, -3), read(`reference/${f}`)]),
  );
  const llmsFull = read('llms-full.txt');
  const searchIndex = read('search-index.json');
  const agentGuide = read('agent-guide.md');
  const toolCount = deps.operations.filter((o) => o.mcp).length;
  // What the pages say follows the contract: an operation they name is one it has, and the client
  // admins' page exists only with client tenancy (svc.yaml features).
  const hasOperation = (id: string) => deps.operations.some((o) => o.id === id);
  const metaPath = deps.operations.find((o) => o.id === 'meta.get' && o.method === 'GET')?.path ?? null;
  const clientTenancy = service.features.clientTenancy;
  // The request controls the operators' page names: those an operation of this contract has (dry-run is every command's).
  const writeControls = [
    deps.operations.some((o) => o.idempotency !== 'none') ? '<code>Idempotency-Key</code>' : '',
    '<code>Prefer: dry-run</code>',
    deps.operations.some((o) => o.ifMatch === 'required') ? '<code>If-Match</code>' : '',
  ].filter(Boolean).join(', ');
  // The security page's line on webhooks: only for a contract that has them.
  const webhooksLine = guideMarkdown.webhooks
    ? `<li>Webhooks are signed under Standard Webhooks; secrets are shown once and rotate with a ${service.limits.webhookSecretOverlapHours}-hour overlap.</li>\n`
    : '';
  // The search box's hint: the first command of this contract, and a guide's word.
  const searchExample = [deps.operations.filter((o) => o.kind === 'command').map((o) => o.id).sort()[0], 'errors'].filter(Boolean).join(', ');
  const signInLinks = (path: string) => ({
    sign_in: `${base}/console/sign-in?next=${encodeURIComponent(path)}`,
    request_access: `${base}/request-access`,
  });

  /** A problem: an HTML page for a browser, problem JSON otherwise. */
  const problem = (c: Context<AppEnv>, err: ProblemError, extra: Record<string, unknown> = {}): Response => {
    const json = problemResponse(c, err, base, extra);
    if (!wants(c, 'text/html')) return json;
    const d = problemDef(err.code);
    const headers = new Headers(json.headers);
    headers.set('Content-Type', 'text/html; charset=utf-8');
    return new Response(
      page({
        title: `${d.title} — svc developer portal`,
        body: `<h1>${escapeHtml(d.title)}</h1><p class="notice error" role="alert">${escapeHtml(err.message)}</p>
<p class="muted">Problem <a href="/problems/${escapeHtml(err.code)}"><code>${escapeHtml(err.code)}</code></a>, status ${json.status}.</p>`,
      }),
      { status: json.status, headers },
    );
  };

  /** Who reads the page: a live session first, else a bearer credential; null when neither. */
  async function viewerOf(c: Context<AppEnv>): Promise<{ viewer: Viewer; kind: string } | null> {
    const session = await sessions.current(c);
    if (session) return { viewer: { name: session.name, kind: session.kind, via: 'session' }, kind: session.kind };
    if (c.req.header('authorization') === undefined) return null;
    const principal = await deps.authenticate(c); // a refused credential throws its 401 problem
    return { viewer: { name: principal.id, kind: principal.kind, via: 'bearer' }, kind: principal.kind };
  }

  /** The signed-in person on a public page (the header shows them and a sign-out button). */
  const publicViewer = async (c: Context<AppEnv>): Promise<Viewer | null> => {
    const session = await sessions.current(c);
    return session ? { name: session.name, kind: session.kind, via: 'session' } : null;
  };

  type Render = (c: Context<AppEnv>, viewer: Viewer) => Response | Promise<Response>;
  /** A page that needs a signed-in account (rule 7). */
  const signedIn = (path: string, render: Render) =>
    app.get(path, async (c) => {
      let who: Awaited<ReturnType<typeof viewerOf>>;
      try {
        who = await viewerOf(c);
      } catch (err) {
        const p = err instanceof ProblemError ? err : new ProblemError('unauthorized', 'The credential was refused.');
        return problem(c, p, p.code === 'unauthorized' || p.code === 'invalid_token' ? signInLinks(new URL(c.req.url).pathname) : {});
      }
      if (!who) {
        const url = new URL(c.req.url);
        const here = url.pathname + url.search;
        if (wants(c, 'text/html')) return c.redirect(`/console/sign-in?next=${encodeURIComponent(here)}`, 302);
        return problem(c, new ProblemError('unauthorized', 'This page needs a signed-in account or a bearer credential.'), signInLinks(here));
      }
      c.header('Cache-Control', 'private, no-store');
      return render(c, who.viewer);
    });

  const text = (body: string, type: string) => (c: Context<AppEnv>) => c.body(body, 200, { 'Content-Type': type });

  app.get(STYLESHEET_PATH, () => new Response(STYLESHEET, { headers: { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' } }));

  // ---- public pages
  app.get('/', async (c) =>
    c.html(
      page({
        title: 'svc developer portal',
        path: '/',
        viewer: await publicViewer(c),
        body: `<h1>${escapeHtml(service.title)}</h1>
<p class="lede">${escapeHtml(service.description ?? `${service.title}: REST under /v1, MCP at /mcp.`)}</p>
<p>Contract ${escapeHtml(service.contractVersion)}: ${deps.operations.length} operations in ${familyList.length} families, ${toolCount} of them MCP tools, ${service.scopes.length} scopes and ${service.eventTypes.length} webhook event types.</p>
<h2>Who are you?</h2>
<ul class="cards">
<li><a href="/operators">Operators: scripts and agents</a><p>API keys, the REST API and the MCP server for your automation.</p></li>
${clientTenancy ? '<li><a href="/client-admins">Client administrators</a><p>Sign in with OAuth and act for your organisation.</p></li>\n' : ''}</ul>
<h2>Start here</h2>
<ul class="cards">
<li><a href="/docs">Documentation</a><p>Guides: REST, MCP, OAuth, webhooks, errors.</p></li>
<li><a href="/reference">Reference</a><p>Every operation, family by family.</p></li>
<li><a href="/v1/docs">Interactive reference</a><p>Browse and try every operation with your key.</p></li>
<li><a href="/changelog">Changelog</a><p>What changed in each contract version.</p></li>
</ul>
<p>Guides and reference pages need an account: <a href="/console/sign-in">sign in</a> or <a href="/request-access">request access</a>. Programs send <code>Authorization: Bearer</code>.</p>`,
      }),
    ),
  );

  const audience = (path: string, title: string, body: string) =>
    app.get(path, async (c) => c.html(page({ title: `${title} — svc developer portal`, path, viewer: await publicViewer(c), body: `<h1>${title}</h1>\n${body}` })));
  audience(
    '/operators',
    'Operators: scripts and agents',
    `<p class="lede">Automate the platform's work with an API key, over REST or as an agent over MCP.</p>
<ol>
<li>Get a key: ${hasOperation('keys.create') ? 'operators create keys in the dashboard (<code>keys.create</code>)' : 'ask whoever runs this service'}; a key acts for its owner, with scopes no wider than the owner's role, and lives at most ${service.limits.apiKeyLifetimeDays} days.</li>
<li>Send it only as <code>Authorization: Bearer &lt;key&gt;</code>, never in a URL${metaPath ? `, and call <code>GET ${metaPath}</code> first: it lists your effective scopes` : ''}.</li>
<li>Scripts: follow <a href="/docs/rest">Connect over REST</a>. Agents: <a href="/docs/mcp">Connect over MCP</a> has a configuration for each popular MCP client, and <a href="/agent-guide.md">the agent guide</a> holds every rule in one Markdown file.</li>
<li>Writes are safe to retry: ${writeControls}.${service.features.approvals ? ' Tier 2 and 3 commands answer 202: a person approves them in the product.' : ''}</li>
</ol>
<p>See also: <a href="/docs/errors">errors and retries</a>, ${guideMarkdown.webhooks ? '<a href="/docs/webhooks">webhooks</a>, ' : ''}<a href="/reference">the reference</a>.</p>`,
  );
  if (clientTenancy) audience(
    '/client-admins',
    'Client administrators',
    `<p class="lede">Act for your organisation: sign in through the identity provider and call the API or the MCP server with your OAuth access token.</p>
<ul>
<li>Your reach is your own client: the records of your organisation, never another's.</li>
<li>Scopes are consented on the grant${metaPath ? `; <code>GET ${metaPath}</code> shows what your token may do` : ''}.</li>
<li>Start with ${guideMarkdown.oauth ? '<a href="/docs/oauth">OAuth for client administrators</a>, then ' : ''}<a href="/docs/mcp">Connect over MCP</a> to use an AI assistant.</li>
</ul>
<p>No account yet? <a href="/request-access">Request access</a>; the team reviews each request by hand.</p>`,
  );

  app.get('/docs', async (c) =>
    c.html(
      page({
        title: 'Documentation — svc developer portal',
        path: '/docs',
        viewer: await publicViewer(c),
        body: `<h1>Documentation</h1>
<p class="lede">Guides for connecting to the ${escapeHtml(service.title)}. The guides and the reference need a signed-in account (or a bearer credential for programs).</p>
<ul class="cards">${guideList.map((g) => `<li><a href="${g.url}">${escapeHtml(g.title)}</a><p>${escapeHtml(g.text)}</p></li>`).join('')}</ul>
<h2>Documents</h2>
<ul>
<li><a href="/connect">Connect</a>: the addresses of this server and where to start.</li>
<li><a href="/reference">Reference</a>, one page per family, and the <a href="/v1/docs">interactive reference</a>.</li>
<li><a href="/openapi.json">OpenAPI 3.1 document</a>, <a href="/agent-guide.md">agent guide</a>, <a href="/llms-full.txt">every operation in one Markdown file</a>, <a href="/llms.txt">llms.txt</a> (public).</li>
<li><a href="/problems">Problem codes</a> and the <a href="/changelog">changelog</a> (public).</li>
</ul>`,
      }),
    ),
  );

  app.get('/security', async (c) =>
    c.html(
      page({
        title: 'Security — svc developer portal',
        path: '/security',
        viewer: await publicViewer(c),
        body: `<h1>Security</h1>
<ul>
<li>Credentials go only in <code>Authorization: Bearer</code>; a request with a credential in its URL is refused.</li>
<li>API keys are hashed at rest, shown once, expire after ${service.limits.apiKeyLifetimeDays} days, can carry an IP allowlist and are revoked at once.</li>
<li>OAuth access tokens live ${service.limits.accessTokenLifetimeSeconds} s; a revoked grant refuses every token issued before it.</li>
<li>Every call is audited with the caller, the credential, the login method and the tool; request bodies and secrets are never recorded.</li>
${service.features.approvals ? "<li>Tier 2 and 3 commands wait for a person's approval; nobody approves their own write.</li>\n" : ''}${webhooksLine}<li>Portal sessions are server-side, behind an <code>HttpOnly; Secure; SameSite=Lax</code> cookie; they expire, end on sign-out, and end when the user or the key they signed in with is revoked.</li>
</ul>
<p>Found a problem? Tell the service's contact; do not test against other people's data.</p>`,
      }),
    ),
  );

  const health = async () => {
    const started = performance.now();
    try {
      await database.execute('select 1');
      return { status: 'ok' as const, database: 'ok', databaseMs: Math.round(performance.now() - started) };
    } catch {
      return { status: 'unavailable' as const, database: 'unavailable', databaseMs: null };
    }
  };
  app.get('/health', (c) => readinessResponse(c, deps.readiness, service, base));
  app.get('/status', async (c) => {
    const h = await health();
    const body = { ...h, contractVersion: service.contractVersion, apiVersion: service.apiVersion, checkedAt: (deps.now?.() ?? new Date()).toISOString() };
    c.header('Cache-Control', 'no-store');
    if (!wants(c, 'text/html')) return c.json(body, h.status === 'ok' ? 200 : 503);
    return c.html(
      page({
        title: 'Status — svc developer portal',
        path: '/status',
        viewer: await publicViewer(c),
        body: `<h1>Status</h1>
<p class="notice${h.status === 'ok' ? '' : ' error'}" role="status"><strong>${h.status === 'ok' ? 'All systems operational' : 'Degraded: the database does not answer'}</strong></p>
<dl class="facts">
<dt>API</dt><dd>${h.status === 'ok' ? 'serving' : 'unavailable'} (REST <code>/v1</code>, MCP <code>/mcp</code>)</dd>
<dt>Database</dt><dd>${escapeHtml(h.database)}${h.databaseMs !== null ? ` (${h.databaseMs} ms)` : ''}</dd>
<dt>Contract</dt><dd>${escapeHtml(service.contractVersion)} (<code>${escapeHtml(service.apiVersionHeader ?? DEFAULT_API_VERSION_HEADER)}: ${escapeHtml(service.apiVersion)}</code>)</dd>
<dt>Checked</dt><dd>${escapeHtml(body.checkedAt)}</dd>
</dl>
<p class="muted">Machine-readable: <a href="/health">/health</a> and <a href="/v1/health">/v1/health</a>.</p>`,
      }),
      h.status === 'ok' ? 200 : 503,
    );
  });

  // ---- problem codes by Accept
  const problemFacts = (code: ProblemCode) => {
    const d = problemDef(code);
    return { type: `${base}/problems/${code}`, code, status: d.status, title: d.title, retry: d.retry, retryable: retryable(code), retryAfter: d.retryAfter, guidance: RETRY_TEXT[d.retry] };
  };
  app.get('/problems', async (c) => {
    c.header('Vary', 'Accept');
    const codes = problemCodes().sort();
    if (wants(c, 'text/html'))
      return c.html(
        page({
          title: 'Problem codes — svc developer portal',
          path: '/problems',
          viewer: await publicViewer(c),
          body: `<h1>Problem codes</h1><p>Every error is an RFC 9457 <code>application/problem+json</code> document; its <code>type</code> is one of these pages.</p>
<div class="table"><table><thead><tr><th>code</th><th>status</th><th>title</th></tr></thead><tbody>${codes
            .map((code) => `<tr><td><a href="/problems/${code}"><code>${code}</code></a></td><td>${problemDef(code).status}</td><td>${escapeHtml(problemDef(code).title)}</td></tr>`)
            .join('')}</tbody></table></div>`,
        }),
      );
    if (wants(c, 'text/markdown'))
      return new Response(`# Problem codes\n\n| code | status | title |\n|---|---|---|\n${codes.map((code) => `| \`${code}\` | ${problemDef(code).status} | ${problemDef(code).title} |`).join('\n')}\n`, {
        headers: { 'Content-Type': 'text/markdown; charset=utf-8', Vary: 'Accept' },
      });
    return c.json({ items: codes.map(problemFacts) });
  });
  app.get('/problems/:code', async (c) => {
    const code = c.req.param('code');
    c.header('Vary', 'Accept');
    if (!isProblemCode(code)) return problem(c, new ProblemError('not_found', 'There is no such problem code.'));
    const f = problemFacts(code);
    if (wants(c, 'text/html'))
      return c.html(
        page({
          title: `${code} — svc problem`,
          path: `/problems/${code}`,
          viewer: await publicViewer(c),
          body: `<h1>${escapeHtml(f.title)}</h1>
<dl class="facts">
<dt>type</dt><dd><code>${escapeHtml(f.type)}</code></dd>
<dt>code</dt><dd><code>${escapeHtml(code)}</code></dd>
<dt>status</dt><dd>${f.status}</dd>
<dt>retryable</dt><dd>${f.retryable}</dd>
<dt>retry</dt><dd>${escapeHtml(f.guidance)}${f.retryAfter !== null ? ` Retry-After: ${f.retryAfter} s.` : ''}</dd>
</dl>
<p>Every error is an RFC 9457 <code>application/problem+json</code> document with the members type, title, status, detail, code, instance, requestId and retryable.</p>
<p><a href="/problems">All problem codes</a></p>`,
        }),
      );
    if (wants(c, 'text/markdown'))
      return new Response(
        `# ${f.title}\n\n- type: \`${f.type}\`\n- code: \`${code}\`\n- status: ${f.status}\n- retryable: ${f.retryable}\n- retry: ${f.guidance}${f.retryAfter !== null ? ` Retry-After: ${f.retryAfter} s.` : ''}\n`,
        { headers: { 'Content-Type': 'text/markdown; charset=utf-8', Vary: 'Accept' } },
      );
    return c.json(f);
  });

  // ---- signed-in pages and documents
  signedIn('/connect', (c, viewer) =>
    c.html(
      page({
        title: 'Connect — svc developer portal',
        path: '/connect',
        viewer,
        body: `<h1>Connect</h1>
<dl class="facts">
<dt>REST</dt><dd><code>${escapeHtml(base)}/v1</code>${metaPath ? ` (start with <code>GET ${metaPath}</code>)` : ''}</dd>
<dt>MCP</dt><dd><code>${escapeHtml(base)}/mcp</code> (Streamable HTTP, ${toolCount} tools)</dd>
<dt>Credential</dt><dd><code>Authorization: Bearer &lt;API key or access token&gt;</code></dd>
</dl>
<ul class="cards">${guideList
          .filter((g) => ['/docs/rest', '/docs/mcp', '/docs/oauth'].includes(g.url))
          .map((g) => `<li><a href="${g.url}">${escapeHtml(g.title)}</a><p>${escapeHtml(g.text)}</p></li>`)
          .join('')}</ul>`,
      }),
    ),
  );
  // Guide and reference pages are rendered from Markdown on their first request, not at start.
  for (const g of guideList) {
    const slug = g.url.slice('/docs/'.length);
    let html: string | undefined;
    signedIn(g.url, (c, viewer) =>
      c.html(page({ title: `${g.title} — svc developer portal`, path: g.url, viewer, body: (html ??= markdownToHtml(guideMarkdown[slug]!)) })),
    );
  }
  signedIn('/reference', (c, viewer) =>
    c.html(
      page({
        title: 'Reference — svc developer portal',
        path: '/reference',
        viewer,
        head: '<script src="/portal-search.js" defer></script>',
        body: `<h1>Reference</h1>
<p>One page per family. Also: the <a href="/v1/docs">interactive reference</a>, the <a href="/openapi.json">OpenAPI document</a> and <a href="/llms-full.txt">every operation in one file</a>.</p>
<form role="search" onsubmit="return false"><label for="search">Search pages and operations</label> <input id="search" type="search" autocomplete="off" placeholder="for example: ${escapeHtml(searchExample)}"></form>
<ul id="search-results" aria-live="polite"></ul>
<div class="table"><table><thead><tr><th>family</th><th>what it covers</th></tr></thead><tbody>${familyList
          .map((f) => `<tr><td><a href="${f.url}">${escapeHtml(f.title)}</a></td><td>${escapeHtml(f.text)}</td></tr>`)
          .join('')}</tbody></table></div>`,
      }),
    ),
  );
  for (const [family, markdown] of Object.entries(references)) {
    let html: string | undefined;
    signedIn(`/reference/${family}`, (c, viewer) =>
      c.html(page({ title: `${family} — svc reference`, path: `/reference/${family}`, viewer, body: (html ??= markdownToHtml(markdown)) })),
    );
  }
  signedIn('/openapi.json', (c) => text(deps.openapi(), 'application/json')(c));
  signedIn('/llms-full.txt', text(llmsFull, 'text/plain; charset=utf-8'));
  signedIn('/agent-guide.md', text(agentGuide, 'text/markdown; charset=utf-8'));
  signedIn('/search-index.json', text(searchIndex, 'application/json'));
  // The reference page's search: fetches /search-index.json (same origin, the session cookie) and filters it.
  app.get('/portal-search.js', () => new Response(SEARCH_SCRIPT, { headers: { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=3600' } }));

  // ---- request access
  const AUDIENCES = { operator_scripts: 'Operator: scripts and agents', client_admin: 'Client administrator', other: 'Other' } as const;
  const requestForm = (values: Record<string, string> = {}, error = '') => `<h1>Request access</h1>
<p>Access to the developer portal is reviewed by hand. Tell us who you are; an operator answers by email.</p>
${error ? `<p class="notice error" role="alert">${escapeHtml(error)}</p>` : ''}
<form class="stack" method="post" action="/request-access">
<label>Name <input name="name" required maxlength="200" value="${escapeHtml(values.name ?? '')}"></label>
<label>Email <input name="email" type="email" required maxlength="320" value="${escapeHtml(values.email ?? '')}"></label>
<label>Organisation <input name="organisation" required maxlength="200" value="${escapeHtml(values.organisation ?? '')}"></label>
<label>You are <select name="audience">${Object.entries(AUDIENCES)
    .map(([v, l]) => `<option value="${v}"${values.audience === v ? ' selected' : ''}>${l}</option>`)
    .join('')}</select></label>
<label>What do you want to build? <textarea name="message" maxlength="4000">${escapeHtml(values.message ?? '')}</textarea></label>
<div><button type="submit">Send the request</button></div>
</form>`;
  app.get('/request-access', async (c) => c.html(page({ title: 'Request access — svc developer portal', path: '/request-access', viewer: await publicViewer(c), body: requestForm() })));
  app.post('/request-access', async (c) => {
    const type = c.req.header('content-type') ?? '';
    let values: Record<string, unknown>;
    if (type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data')) values = await c.req.parseBody();
    else if (type.startsWith('application/json')) {
      try {
        values = (await c.req.json()) as Record<string, unknown>;
      } catch {
        return problem(c, new ProblemError('malformed_json', 'The body is not JSON.'));
      }
      if (!values || typeof values !== 'object' || Array.isArray(values)) return problem(c, new ProblemError('validation_failed', 'The body must be a JSON object.', { errors: [{ pointer: '', message: 'must be an object' }] }));
    } else return problem(c, new ProblemError('unsupported_media_type', 'Send the form as application/x-www-form-urlencoded or application/json.'));
    const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string).trim() : '');
    const v = { name: str('name'), email: str('email'), organisation: str('organisation'), audience: str('audience') || 'other', message: str('message') };
    const errors: { pointer: string; message: string }[] = [];
    const bad = (s: string) => /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]|[\ud800-\udfff]/.test(s);
    if (!v.name || v.name.length > 200 || bad(v.name)) errors.push({ pointer: '/name', message: 'a name of 1 to 200 characters' });
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.email) || v.email.length > 320) errors.push({ pointer: '/email', message: 'an email address' });
    if (!v.organisation || v.organisation.length > 200 || bad(v.organisation)) errors.push({ pointer: '/organisation', message: 'an organisation of 1 to 200 characters' });
    if (!(v.audience in AUDIENCES)) errors.push({ pointer: '/audience', message: `one of ${Object.keys(AUDIENCES).join(', ')}` });
    if (v.message.length > 4000 || bad(v.message)) errors.push({ pointer: '/message', message: 'at most 4000 characters of text' });
    if (errors.length) {
      const err = new ProblemError('validation_failed', errors.map((e) => `${e.pointer}: ${e.message}`).join('; '), { errors });
      if (wants(c, 'text/html'))
        return c.html(page({ title: 'Request access — svc developer portal', path: '/request-access', body: requestForm(v, `Please give ${errors.map((e) => `${e.pointer.slice(1)} (${e.message})`).join(', ')}.`) }), 422);
      return problem(c, err);
    }
    const id = newId('acr');
    await database.db.insert(accessRequests).values({ id, ...v, createdAt: deps.now?.() ?? new Date() });
    if (!wants(c, 'text/html')) return c.json({ id, status: 'pending' }, 201);
    return c.html(
      page({
        title: 'Request sent — svc developer portal',
        path: '/request-access',
        body: `<h1>Request sent</h1><p class="notice" role="status">Thank you, ${escapeHtml(v.name)}. An operator reviews your request (<code>${id}</code>) and answers at ${escapeHtml(v.email)}.</p><p><a href="/">Back to the portal</a></p>`,
      }),
      201,
    );
  });
  signedIn('/console/access-requests', async (c, viewer) => {
    if (viewer.kind !== 'operator') return problem(c, new ProblemError('forbidden', 'Only operators review access requests.'));
    const rows = await database.db.select().from(accessRequests).orderBy(desc(accessRequests.createdAt), desc(accessRequests.id)).limit(500);
    if (!wants(c, 'text/html'))
      return c.json({ items: rows.map((r) => ({ id: r.id, name: r.name, email: r.email, organisation: r.organisation, audience: r.audience, message: r.message, status: r.status, createdAt: r.createdAt.toISOString() })) });
    return c.html(
      page({
        title: 'Access requests — svc developer portal',
        path: '/console/access-requests',
        viewer,
        body: `<h1>Access requests</h1><p>${rows.length} request${rows.length === 1 ? '' : 's'}, newest first.</p>
<div class="table"><table><thead><tr><th>received</th><th>name</th><th>email</th><th>organisation</th><th>audience</th><th>message</th><th>status</th></tr></thead><tbody>${rows
          .map(
            (r) =>
              `<tr><td>${escapeHtml(r.createdAt.toISOString().slice(0, 16).replace('T', ' '))}</td><td>${escapeHtml(r.name)}</td><td>${escapeHtml(r.email)}</td><td>${escapeHtml(r.organisation)}</td><td>${escapeHtml(r.audience)}</td><td>${escapeHtml(r.message)}</td><td>${escapeHtml(r.status)}</td></tr>`,
          )
          .join('')}</tbody></table></div>`,
      }),
    );
  });

  mountSignIn(app, {
    config,
    db: database.db,
    sessions,
    oidc: deps.oidc,
    authenticateBearer: deps.authenticateBearer,
    clientIp: deps.clientIp,
    problem: (c, err) => problem(c, err, err.code === 'unauthorized' ? signInLinks('/') : {}),
  });
}

const SEARCH_SCRIPT = `(function () {
  var input = document.getElementById('search'), list = document.getElementById('search-results'), entries = null;
  if (!input) return;
  function show() {
    var q = input.value.trim().toLowerCase();
    list.textContent = '';
    if (!q || !entries) return;
    entries.filter(function (e) { return (e.title + ' ' + e.text).toLowerCase().indexOf(q) >= 0; }).slice(0, 20).forEach(function (e) {
      var li = document.createElement('li'), a = document.createElement('a');
      a.href = e.url; a.textContent = e.title;
      li.appendChild(a); li.appendChild(document.createTextNode(' — ' + e.text));
      list.appendChild(li);
    });
  }
  input.addEventListener('input', function () {
    if (entries) return show();
    fetch('/search-index.json', { credentials: 'same-origin' }).then(function (r) { return r.json(); }).then(function (d) { entries = d.entries; show(); });
  });
})();
`;
