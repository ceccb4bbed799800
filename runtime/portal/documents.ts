// Published documents:
//   GET /v1/openapi.json, /v1/agent-guide.md   any valid bearer credential, no scope (401 without)
//   GET /llms.txt                              public
//   GET /v1/health, /v1/health/live            no credential: readiness and liveness (observability/health.ts)
//   GET /.well-known/oauth-protected-resource and …/mcp   public metadata (RFC 9728)
//   GET /v1/reference/<family>.md              per-family reference; bearer credential, as /agent-guide.md
//   GET /changelog                             public: generated/CHANGELOG.md (HTML when Accept prefers text/html)
//   GET /v1/docs                               public interactive reference (runtime/portal/reference-page.ts)
import type { Hono } from 'hono';
import type { Config } from '../config.ts';
import type { RuntimeService } from '../contract-types.ts';
import type { Database } from '../data/client.ts';
import type { AppEnv, RequestAuthenticator } from '../http/app-env.ts';
import { ProblemError } from '../problem-error.ts';
import { problemResponse } from '../http/rest/problem-response.ts';
import { htmlPage, markdownToHtml, prefersHtml } from './markdown-page.ts';
import { mountReference } from './reference-page.ts';
import { LIVE_PATH, livenessResponse, readinessResponse, type Readiness } from '../observability/health.ts';

/** The identity provider's own sign-in scopes (spec, Authentication 10). */
export const IDP_SCOPES = ['openid', 'email', 'profile', 'offline_access'] as const;

export interface DocumentsDeps {
  config: Config;
  service: RuntimeService;
  database: Database;
  /** What /v1/health reports (runtime/observability/health.ts). */
  readiness: Readiness;
  authenticate: RequestAuthenticator;
  /** The OpenAPI document as served (servers set to this service), built on first use. */
  openapi: () => string;
  agentGuide: string;
  llmsTxt: string;
  /** generated/docs/reference/<family>.md by family. */
  references: Record<string, string>;
  changelog: string;
}

export function protectedResourceMetadata(config: Config, service: RuntimeService, resourcePath: '' | '/mcp'): Record<string, unknown> {
  return {
    resource: `${config.baseUrl}${resourcePath}`,
    authorization_servers: config.oauthIssuer ? [config.oauthIssuer] : [],
    scopes_supported: [...IDP_SCOPES],
    svc_scopes_supported: [...service.scopes],
    bearer_methods_supported: ['header'],
    resource_name: service.title,
    resource_documentation: `${config.baseUrl}/v1/agent-guide.md`,
  };
}



export function mountDocuments(app: Hono<AppEnv>, deps: DocumentsDeps): void {
  const { config, service } = deps;
  const signIn = {
    sign_in: `${config.baseUrl}/console/sign-in`,
    request_access: `${config.baseUrl}/request-access`,
  };

  const withCredential = (path: string, render: () => Response) =>
    app.get(path, async (c) => {
      try {
        await deps.authenticate(c);
      } catch (err) {
        const code = err instanceof ProblemError ? err.code : '';
        return problemResponse(c, err, config.baseUrl, code === 'unauthorized' ? { ...signIn, sign_in: `${signIn.sign_in}?next=${encodeURIComponent(path)}` } : {});
      }
      return render();
    });

  withCredential('/v1/openapi.json', () => new Response(deps.openapi(), { headers: { 'Content-Type': 'application/json' } }));
  withCredential('/v1/agent-guide.md', () => new Response(deps.agentGuide, { headers: { 'Content-Type': 'text/markdown; charset=utf-8' } }));
  app.get('/llms.txt', () => new Response(deps.llmsTxt, { headers: { 'Content-Type': 'text/plain; charset=utf-8' } }));
  let changelogHtml: string | null = null; // rendered on first use
  app.get('/changelog', (c) =>
    prefersHtml(c.req.header('accept'))
      ? c.html((changelogHtml ??= htmlPage(`${service.title} — changelog`, markdownToHtml(deps.changelog))), 200, { Vary: 'Accept' })
      : new Response(deps.changelog, { headers: { 'Content-Type': 'text/markdown; charset=utf-8', Vary: 'Accept' } }),
  );
  mountReference(app);
  for (const [family, markdown] of Object.entries(deps.references))
    withCredential(`/v1/reference/${family}.md`, () => new Response(markdown, { headers: { 'Content-Type': 'text/markdown; charset=utf-8' } }));

  // Readiness (database, migrations, workers) and liveness, for load balancers (observability/health.ts).
  app.get('/v1/health', (c) => readinessResponse(c, deps.readiness, service, config.baseUrl));
  app.get(LIVE_PATH, () => livenessResponse());

  app.get('/.well-known/oauth-protected-resource', (c) => c.json(protectedResourceMetadata(config, service, '')));
  app.get('/.well-known/oauth-protected-resource/mcp', (c) => c.json(protectedResourceMetadata(config, service, '/mcp')));

}
