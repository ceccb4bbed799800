// The REST transport: every route of generated/routes.ts on Hono. The app's getPath rewrites the
// custom-method colon (`/v1/tasks/t1:complete` -> `/v1/tasks/t1/~complete`, runtime/http/route-path.ts)
// so the generated router paths match. A route handler authenticates (with the rate limit),
// checks the write switch, feature flags and the operation's access before reading the body, turns the request into
// a Call and renders the executor's CallResult; anything thrown becomes a problem document.
import { deprecationHeaders } from '../../pipeline/deprecation.ts';
import type { Context, Hono } from 'hono';
import type { Config } from '../../config.ts';
import type { OperationDef, RouteDef } from '../../contract-types.ts';
import { auditEntry, failedWith, type Auditor } from '../../pipeline/audit.ts';
import type { Principal } from '../../handler-types.ts';
import { checkAccess, checkEnabled } from '../../pipeline/access.ts';
import type { Call, CallResult, Executor } from '../../pipeline/types.ts';
import type { AppEnv, RequestAuthenticator } from '../app-env.ts';
import { ProblemError } from '../../problem-error.ts';
import { controlsOf, gatherInput } from './input.ts';
import { problemResponse, requestPath } from './problem-response.ts';
import { metrics } from '../../observability/index.ts';
import { cutOffSignal } from '../../stream-cutoff.ts';
import type { IncomingMessage } from 'node:http';


export interface RestDeps {
  executor: Executor;
  authenticate: RequestAuthenticator;
  routes: readonly RouteDef[];
  operationsById: Readonly<Record<string, OperationDef>>;
  config: Config;
  maxBodyBytes: number;
  /** limits.maxJsonDepth of the registry. */
  maxJsonDepth: number;
  auditor?: Auditor | null;
}

/** A deprecated operation answers every response, problems included, with its deprecation headers. */
function withDeprecation(res: Response, op: OperationDef): Response {
  if (!op.deprecated) return res;
  for (const [name, value] of Object.entries(deprecationHeaders(op.deprecated)))
    for (const v of Array.isArray(value) ? value : [value]) res.headers.append(name, v);
  return res;
}

/** A body its producer may cut off (runtime/stream-cutoff.ts): the connection is destroyed when it says so. */
function cutOffOnAbort(body: ReadableStream, c: Context<AppEnv> | undefined): void {
  const signal = cutOffSignal(body);
  const socket = (c?.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
  if (!signal || !socket) return;
  const destroy = () => socket.destroy();
  if (signal.aborted) destroy();
  else signal.addEventListener('abort', destroy, { once: true });
}

export function renderResult(result: CallResult, op: OperationDef, c?: Context<AppEnv>): Response {
  if (result.body instanceof Response) {
    for (const [k, v] of Object.entries(result.headers)) result.body.headers.set(k, v);
    return withDeprecation(result.body, op);
  }
  if (result.body instanceof ReadableStream) {
    cutOffOnAbort(result.body, c);
    const headers = new Headers(result.headers);
    if (!headers.has('content-type')) headers.set('Content-Type', op.stream === 'sse' ? 'text/event-stream' : 'application/octet-stream');
    return withDeprecation(new Response(result.body, { status: result.status, headers }), op);
  }
  const appHeaders = !op.deprecated && c ? c.get('appHeaders') : undefined;
  if (appHeaders) {
    // The hot path: every header in one plain object, app-wide ones included (headers/index.ts).
    const headers = appHeaders(c!);
    for (const [k, v] of Object.entries(result.headers)) headers[k.toLowerCase()] = v;
    headers['content-type'] = 'application/json';
    c!.set('appHeadersSent', true);
    return new Response(JSON.stringify(result.body ?? null), { status: result.status, headers });
  }
  const headers = new Headers(result.headers);
  headers.set('Content-Type', 'application/json');
  return withDeprecation(new Response(JSON.stringify(result.body ?? null), { status: result.status, headers }), op);
}

/** Compiled router paths, for telling 405 (path known, other method) from 404. */
export function routeMatchers(routes: readonly RouteDef[]): { method: string; re: RegExp }[] {
  return routes.map((r) => ({
    method: r.method,
    re: new RegExp(
      '^' +
        r.routerPath
          .split('/')
          .map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/') +
        '$',
    ),
  }));
}

export function mountRest(app: Hono<AppEnv>, deps: RestDeps): void {
  const { config } = deps;
  for (const route of deps.routes) {
    const op = deps.operationsById[route.id];
    if (!op) throw new Error(`route ${route.method} ${route.path} names an unknown operation ${route.id}`);
    app.on(route.method, route.routerPath, async (c) => {
      const started = performance.now();
      const path = requestPath(c);
      let principal: Principal | null = null;
      let executed = false;
      try {
        principal = await deps.authenticate(c);
        // Refuse what the caller may not do before reading its body.
        checkEnabled(op, config);
        checkAccess(op, principal);
        const input = await gatherInput(c, op, deps.maxBodyBytes, deps.maxJsonDepth);
        // An SSE client resumes with Last-Event-ID (EventSource sends it on reconnect); it wins over `after`.
        const lastEventId = op.stream === 'sse' ? c.req.header('last-event-id')?.trim() : undefined;
        if (lastEventId && input && typeof input === 'object') (input as Record<string, unknown>).after = lastEventId;
        const call: Call = {
          op,
          transport: 'rest',
          toolName: null,
          input,
          controls: controlsOf(c),
          principal,
          requestId: c.get('requestId'),
          method: c.req.method,
          path,
        };
        executed = true;
        const result = await deps.executor.execute(call);
        metrics.callEnded('rest', op.id, started, result);
        return renderResult(result, op, c);
      } catch (err) {
        metrics.callEnded('rest', op.id, started, null, err);
        if (!executed) {
          // The executor audits what it runs; failures before it are audited here.
          const request = { requestId: c.get('requestId'), transport: 'rest', operationId: op.id, toolName: null, method: c.req.method, path } as const;
          deps.auditor?.record(auditEntry(request, principal, failedWith(err), started));
        }
        return withDeprecation(problemResponse(c, err, config.baseUrl), op);
      }
    });
  }
}

/** The app's notFound: 405 with Allow when the path exists under other methods, else 404 not_found. */
export function notFoundHandler(routes: readonly RouteDef[], baseUrl: string, rewrite: (path: string) => string) {
  const matchers = routeMatchers(routes);
  return (c: import('hono').Context<AppEnv>): Response => {
    const routed = rewrite(requestPath(c));
    const allowed = [...new Set(matchers.filter((m) => m.re.test(routed)).map((m) => m.method))];
    if (allowed.length > 0) {
      const res = problemResponse(c, new ProblemError('method_not_allowed', `${c.req.method} is not served on this path; use ${allowed.join(' or ')}.`), baseUrl);
      res.headers.set('Allow', allowed.join(', '));
      return res;
    }
    return problemResponse(c, new ProblemError('not_found', 'There is no such route. The routes are listed in /v1/openapi.json.'), baseUrl);
  };
}
