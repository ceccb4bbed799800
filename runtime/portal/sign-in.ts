// Portal sign-in.
//   With an identity provider (SVC_PORTAL_OIDC_CLIENT_ID set; issuer SVC_PORTAL_OIDC_ISSUER or
//   SVC_OAUTH_ISSUER): OpenID Connect authorization code with PKCE through openid-client. The state,
//   nonce and code verifier wait in portal_sign_ins behind a short-lived cookie; the callback checks
//   them (a tampered or replayed state is refused), maps the ID token's `sub` to a live user
//   (users.oauth_subject) and starts a session.
//   Without one (the demo): /console/sign-in offers signing in with an API key sent in a POST form
//   body (never in a URL); the key must be live and unbound (an operator's own key).
// `next` is kept only as a relative path (safeNext): no open redirect.
import type * as Oidc from 'openid-client';
import type { Context, Hono } from 'hono';
import { eq } from 'drizzle-orm';
import type { Config } from '../config.ts';
import type { Db } from '../data/client.ts';
import { users } from '../data/schema.ts';
import type { Principal } from '../handler-types.ts';
import type { AppEnv } from '../http/app-env.ts';
import { ProblemError } from '../problem-error.ts';
import { escapeHtml, page } from './html.ts';
import { safeNext, type SessionStore } from './sessions.ts';

export interface PortalOidcConfig {
  issuer: string;
  clientId: string;
  /** Confidential client (client_secret_post); absent: a public client with PKCE only. */
  clientSecret?: string | null;
}

/** The portal's identity provider from the environment, or null (the demo: API-key sign-in). */
export function portalOidcFromEnv(env: Record<string, string | undefined>, config: Pick<Config, 'oauthIssuer'>): PortalOidcConfig | null {
  const clientId = env.SVC_PORTAL_OIDC_CLIENT_ID;
  const issuer = env.SVC_PORTAL_OIDC_ISSUER || config.oauthIssuer;
  if (!clientId || !issuer) return null;
  return { issuer, clientId, clientSecret: env.SVC_PORTAL_OIDC_CLIENT_SECRET || null };
}

export const CALLBACK_PATH = '/console/callback';

function isLoopback(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
}

export interface SignInDeps {
  config: Config;
  db: Db;
  sessions: SessionStore;
  oidc: PortalOidcConfig | null;
  /** Authorization header value -> principal (as every API request; rate limited). */
  authenticateBearer(authorization: string, ip: string | null): Promise<Principal>;
  clientIp(c: Context<AppEnv>): string | null;
  /** A problem as HTML for a browser, as problem JSON for a program. */
  problem(c: Context<AppEnv>, err: ProblemError, status?: number): Response | Promise<Response>;
}

/** openid-client, loaded on the first sign-in through an identity provider (not at start). */
let oidcModule: Promise<typeof Oidc> | undefined;
const loadOidc = (): Promise<typeof Oidc> => (oidcModule ??= import('openid-client'));

export function mountSignIn(app: Hono<AppEnv>, deps: SignInDeps): void {
  const { config, sessions } = deps;
  let discovered: Promise<Oidc.Configuration> | null = null;
  const oidcConfig = (): Promise<Oidc.Configuration> => {
    const o = deps.oidc!;
    discovered ??= (async () => {
      const issuer = new URL(o.issuer);
      const insecure = issuer.protocol === 'http:' && isLoopback(issuer);
      const oidc = await loadOidc();
      return oidc.discovery(
        issuer,
        o.clientId,
        { redirect_uris: [`${config.baseUrl}${CALLBACK_PATH}`], response_types: ['code'] },
        o.clientSecret ? oidc.ClientSecretPost(o.clientSecret) : oidc.None(),
        insecure ? { execute: [oidc.allowInsecureRequests], timeout: 5 } : { timeout: 5 },
      );
    })().catch((err: unknown) => {
      discovered = null;
      throw err;
    });
    return discovered;
  };

  const signInPage = (next: string, error = '') =>
    page({
      title: 'Sign in — svc developer portal',
      path: '/console/sign-in',
      body: `<h1>Sign in</h1>
${error ? `<p class="notice error" role="alert">${escapeHtml(error)}</p>` : ''}
${
  deps.oidc
    ? `<p>Sign in with your account at the identity provider (${escapeHtml(new URL(deps.oidc.issuer).host)}).</p>
<p><a class="button" href="/console/sign-in/start?next=${encodeURIComponent(next)}">Continue to sign in</a></p>`
    : `<p>This server has no identity provider configured (a demo). Sign in with an operator's API key; it is sent in this form's body, never in a URL, and is not kept: the session is a cookie of its own.</p>
<form class="stack" method="post" action="/console/sign-in">
<input type="hidden" name="next" value="${escapeHtml(next)}">
<label>API key <input name="key" type="password" autocomplete="off" required placeholder="svc_sk_test_…"></label>
<div><button type="submit">Sign in</button></div>
</form>`
}
<p class="muted">No account? <a href="/request-access">Request access</a>.</p>`,
    });

  app.get('/console/sign-in', (c) => c.html(signInPage(safeNext(c.req.query('next')))));

  // The demo's API-key sign-in (only without an identity provider).
  app.post('/console/sign-in', async (c) => {
    if (deps.oidc) return deps.problem(c, new ProblemError('method_not_allowed', 'Sign in through the identity provider: GET /console/sign-in.'));
    const type = c.req.header('content-type') ?? '';
    if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data'))
      return deps.problem(c, new ProblemError('unsupported_media_type', 'Send the sign-in form as application/x-www-form-urlencoded.'));
    const form = await c.req.parseBody();
    const key = typeof form.key === 'string' ? form.key.trim() : '';
    const next = safeNext(typeof form.next === 'string' ? form.next : '/');
    const refuse = async (message: string) => {
      const err = new ProblemError('unauthorized', message, { errors: [{ pointer: '/key', message }] });
      if ((c.req.header('accept') ?? '').includes('text/html')) return c.html(signInPage(next, message), 401);
      return deps.problem(c, err);
    };
    if (!key) return refuse('Enter an API key.');
    if (!key.startsWith('svc_sk_')) return refuse('Only an API key (svc_sk_live_… or svc_sk_test_…) signs in here.');
    let principal: Principal;
    try {
      principal = await deps.authenticateBearer(`Bearer ${key}`, deps.clientIp(c));
    } catch (err) {
      if (err instanceof ProblemError && err.code === 'rate_limited') return deps.problem(c, err);
      return refuse('This key is not valid (unknown, revoked or expired).');
    }
    if (principal.loginMethod !== 'api_key' || principal.kind !== 'operator')
      return refuse('Only an operator’s own key (not bound to clients) signs in to the portal.');
    await sessions.start(c, { userId: principal.id, loginMethod: 'api_key', apiKeyId: principal.credentialId });
    return c.redirect(next, 303);
  });

  app.get('/console/sign-in/start', async (c) => {
    if (!deps.oidc) return c.redirect(`/console/sign-in?next=${encodeURIComponent(safeNext(c.req.query('next')))}`, 302);
    let conf: Oidc.Configuration;
    try {
      conf = await oidcConfig();
    } catch {
      return deps.problem(c, new ProblemError('unavailable', 'The identity provider does not answer; try again shortly.'));
    }
    const oidc = await loadOidc();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    await sessions.beginSignIn(c, { state, nonce, codeVerifier, next: safeNext(c.req.query('next')) });
    const url = oidc.buildAuthorizationUrl(conf, {
      redirect_uri: `${config.baseUrl}${CALLBACK_PATH}`,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return c.redirect(url.href, 302);
  });

  app.get(CALLBACK_PATH, async (c) => {
    if (!deps.oidc) return deps.problem(c, new ProblemError('not_found', 'This server signs in without an identity provider.'));
    const pending = await sessions.takeSignIn(c);
    const refused = (detail: string) => deps.problem(c, new ProblemError('unauthorized', detail));
    if (!pending) return refused('No sign-in is under way in this browser (or it took longer than 10 minutes). Start again at /console/sign-in.');
    let sub: string;
    try {
      const conf = await oidcConfig();
      const oidc = await loadOidc();
      // The callback URL as the provider called it, on our base URL (a proxy may change the host).
      const current = new URL(`${config.baseUrl}${CALLBACK_PATH}${new URL(c.req.url).search}`);
      const tokens = await oidc.authorizationCodeGrant(conf, current, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims?.sub) return refused('The identity provider did not say who signed in.');
      sub = claims.sub;
    } catch {
      return refused('The sign-in could not be verified (state, code or token refused). Start again at /console/sign-in.');
    }
    const [user] = await deps.db.select().from(users).where(eq(users.oauthSubject, sub)).limit(1);
    if (!user || user.disabledAt) return deps.problem(c, new ProblemError('forbidden', 'This account has no access to the portal. Request access at /request-access.'));
    await sessions.start(c, { userId: user.id, loginMethod: 'oidc' });
    return c.redirect(pending.next, 303);
  });

  app.post('/console/sign-out', async (c) => {
    await sessions.end(c);
    return c.redirect('/', 303);
  });
}
