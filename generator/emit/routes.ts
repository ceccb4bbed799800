// generated/routes.ts: the Hono route table, static routes before parametrised ones.
import { toRouterPath } from '../../runtime/http/route-path.ts';
import type { RouteDef } from '../../runtime/contract-types.ts';
import type { Model } from '../model.ts';
import { byString, literal, TS_HEADER } from './format.ts';


/** Segment sort keys: a static segment sorts before a parameter at the same depth. */
function routeKey(routerPath: string): string[] {
  return routerPath.split('/').map((s) => (s.startsWith(':') ? '1' : `0${s}`));
}

export function compareRoutes(a: RouteDef, b: RouteDef): number {
  const ka = routeKey(a.routerPath);
  const kb = routeKey(b.routerPath);
  for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
    const c = byString(ka[i], kb[i]);
    if (c) return c;
  }
  return ka.length - kb.length || byString(a.method, b.method) || byString(a.id, b.id);
}

export function routeTable(model: Model): RouteDef[] {
  return model.operations
    .map(({ def }) => ({ id: def.id, method: def.method, path: def.path, routerPath: toRouterPath(def.path) }))
    .sort(compareRoutes);
}

export function emitRoutes(model: Model): string {
  const rows = routeTable(model)
    .map((r) => `  { id: ${JSON.stringify(r.id)}, method: ${JSON.stringify(r.method)}, path: ${JSON.stringify(r.path)}, routerPath: ${JSON.stringify(r.routerPath)} },`)
    .join('\n');
  return `${TS_HEADER}import type { RouteDef } from '../runtime/contract-types.ts';

export type Route = RouteDef;

/** Static routes come before parametrised ones that could match the same request. */
export const routes: readonly Route[] = [
${rows}
];
`;
}
