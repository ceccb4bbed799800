// What createApp (runtime/app.ts) applies when tracing is on, so that the pipeline itself carries no
// tracing code: a span around each input validation and each handler call, a span per MCP tools/call
// (one HTTP request may carry several), and the route template of a request for its server span.
// With tracing off none of this is applied: the registry's own functions run, unwrapped.
import { routePath } from 'hono/route';
import type { RouteDef } from '../contract-types.ts';
import type { PipelineExecutor } from '../pipeline/executor.ts';
import type { ValidateFn } from '../pipeline/validate.ts';
import { inSpan, type RouteOf } from './index.ts';

type AnyFn = (...args: never[]) => unknown;

/** Each operation's validator in a `svc.validate` span. */
export function tracedValidators(validators: Readonly<Record<string, ValidateFn>>): Record<string, ValidateFn> {
  return Object.fromEntries(
    Object.entries(validators).map(([operation, validate]) => {
      const traced: ValidateFn = (data: unknown) => {
        const ok = inSpan('svc.validate', { 'svc.operation': operation }, () => validate(data));
        traced.errors = validate.errors;
        return ok;
      };
      return [operation, traced];
    }),
  );
}

/** Each operation's handler in a `svc.handler` span. */
export function tracedHandlers<H extends AnyFn>(handlers: Readonly<Record<string, H>>): Record<string, H> {
  return Object.fromEntries(
    Object.entries(handlers).map(([operation, handler]) => [
      operation,
      typeof handler === 'function' ? (((...args: Parameters<H>) => inSpan('svc.handler', { 'svc.operation': operation }, () => handler(...args))) as H) : handler,
    ]),
  );
}

/** MCP calls in a `tools/call <tool>` span each (a REST call is its request's server span already). */
export function tracedExecutor(executor: PipelineExecutor): PipelineExecutor {
  return {
    ...executor,
    execute: (call) =>
      call.transport === 'mcp'
        ? inSpan(`tools/call ${call.toolName ?? call.op.id}`, { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': call.toolName ?? call.op.id, 'svc.operation': call.op.id }, () => executor.execute(call))
        : executor.execute(call),
  };
}

/**
 * The route of a served request: an operation's contract path (`/v1/tasks/{task_id}:complete`) and
 * id for the generated routes, Hono's route pattern for the other routes, null for unknown paths.
 */
export function routeResolver(routes: readonly RouteDef[]): RouteOf {
  const byRouterPath = new Map(routes.map((r) => [`${r.method} ${r.routerPath}`, { route: r.path, operation: r.id }]));
  return (c) => {
    const pattern = routePath(c);
    if (!pattern || pattern === '*' || pattern === '/*') return null;
    return byRouterPath.get(`${c.req.method} ${pattern}`) ?? { route: pattern, operation: null };
  };
}
