// The MCP endpoint mounted now and loaded by its first request: runtime/mcp/index.ts brings the MCP
// SDK, zod and Ajv (about a third of the modules a server would otherwise import before its first
// answer), which REST never needs. The routes are registered here, in the same place of the app as
// mountMcp would put them; the first request to one imports the module, lets mountMcp register its
// handlers on a recorder, and from then on every request goes straight to them.
import type { Context, Hono, Next } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { McpDeps } from './index.ts';

/** runtime/mcp/index.ts MCP_PATH (checked when the module loads). */
export const MCP_PATH = '/mcp';
/** The methods mountMcp serves on MCP_PATH (checked when the module loads). */
const METHODS = ['POST', 'GET', 'DELETE', 'PUT', 'PATCH'] as const;

type Handler = (c: Context<AppEnv>, next: Next) => Response | Promise<Response | void>;

export function mountMcpLazily(app: Hono<AppEnv>, deps: McpDeps): void {
  let loading: Promise<Map<string, Handler>> | null = null;
  const load = () =>
    (loading ??= import('./index.ts').then(({ mountMcp, MCP_PATH: path }) => {
      const handlers = new Map<string, Handler>();
      const record = (methods: string[], at: string, handler: Handler) => {
        if (at !== MCP_PATH || path !== MCP_PATH) throw new Error(`lazy MCP mount: mountMcp serves ${at}, expected ${MCP_PATH}`);
        for (const m of methods) handlers.set(m, handler);
      };
      const recorder = {
        post: (at: string, handler: Handler) => record(['POST'], at, handler),
        on: (methods: string | string[], at: string, handler: Handler) => record([methods].flat(), at, handler),
      };
      mountMcp(recorder as unknown as Hono<AppEnv>, deps);
      const served = [...handlers.keys()].sort().join(',');
      if (served !== [...METHODS].sort().join(',')) throw new Error(`lazy MCP mount: mountMcp serves ${served}, expected ${METHODS.join(',')}`);
      return handlers;
    }));
  for (const method of METHODS) app.on(method, MCP_PATH, async (c, next) => (await load()).get(method)!(c, next));
}
