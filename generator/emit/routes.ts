// generated/routes.ts: the Hono route table, static routes before parametrised ones.
import { toRouterPath } from '../../runtime/http/route-path.ts';
import type { OperationDef, RouteDef } from '../../runtime/contract-types.ts';
import type { FamilyModel, Model } from '../model.ts';
import { identityMemo, onForget, session } from '../session.ts';
import { byString, TS_HEADER } from './format.ts';
import { concat, operationsByFamily } from './literal-pieces.ts';


/** Segment sort keys: a static segment sorts before a parameter at the same depth. */
function routeKey(routerPath: string): string[] {
  return routerPath.split('/').map((s) => (s.startsWith(':') ? '1' : `0${s}`));
}

function compareKeys(ka: readonly string[], kb: readonly string[]): number {
  for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
    const c = byString(ka[i], kb[i]);
    if (c) return c;
  }
  return ka.length - kb.length;
}

export function compareRoutes(a: RouteDef, b: RouteDef): number {
  return compareKeys(routeKey(a.routerPath), routeKey(b.routerPath)) || byString(a.method, b.method) || byString(a.id, b.id);
}

/** An operation's route with its sort key and its row of the table. */
interface RouteEntry {
  route: RouteDef;
  key: string[];
  row: string;
  /** sortedEntries's marks: in this compile's table, and in the last one too. */
  mark: number;
}

/** A watcher's memo (session.ts) of each operation's entry: it reads the def's id, method and path only. */
const entries = identityMemo<OperationDef, RouteEntry>();

function routeEntry(def: OperationDef): RouteEntry {
  const kept = entries.get(def);
  if (kept) return kept;
  const route: RouteDef = { id: def.id, method: def.method, path: def.path, routerPath: toRouterPath(def.path) };
  // Joined, not a template: one flat string (a template leaves a rope of its nine parts), so that the
  // table, a rope of rows (pieces.ts), is copied row by row when it is first read.
  const row = ['  { id: ', JSON.stringify(route.id), ', method: ', JSON.stringify(route.method), ', path: ', JSON.stringify(route.path), ', routerPath: ', JSON.stringify(route.routerPath), ' },'].join('');
  return entries.set(def, { route, key: routeKey(route.routerPath), row, mark: 0 });
}

/** A family's operations' entries: read the defs only (the family is the same while its operations are). */
const familyEntries = identityMemo<FamilyModel, RouteEntry[]>();

/** Every operation's entry, by family when the families are model.operations (pieces.ts). */
function currentEntries(model: Model): RouteEntry[] {
  const families = operationsByFamily(model);
  if (!families) return model.operations.map(({ def }) => routeEntry(def));
  const out: RouteEntry[] = [];
  for (const f of families) for (const e of familyEntries.get(f) ?? familyEntries.set(f, f.operations.map(({ def }) => routeEntry(def)))) out.push(e);
  return out;
}

/** compareRoutes, on the keys computed once per entry. */
function compareEntries(a: RouteEntry, b: RouteEntry): number {
  return compareKeys(a.key, b.key) || byString(a.route.method, b.route.method) || byString(a.route.id, b.route.id);
}

/**
 * A watcher's last table, sorted: the next compile keeps the entries still there (in their order)
 * and merges the new ones in, sorted, instead of sorting every route again. compareEntries is a total
 * order (ids are unique), so what remains of a sorted table is sorted and the merge is the table a
 * full sort gives.
 */
let lastSorted: RouteEntry[] = [];
let generation = 0;
onForget(() => {
  lastSorted = [];
});

function sortedEntries(model: Model): RouteEntry[] {
  const current = currentEntries(model);
  if (!session.longLived) return current.sort(compareEntries);
  const inTable = ++generation * 2;
  const inBoth = inTable + 1;
  for (const e of current) e.mark = inTable;
  const kept = lastSorted.filter((e) => e.mark === inTable);
  for (const e of kept) e.mark = inBoth;
  const added = current.filter((e) => e.mark === inTable).sort(compareEntries);
  lastSorted = merge(kept, added);
  return lastSorted;
}

/** The sorted entries of a and b (each sorted): each of b's placed by a binary search in what follows the last. */
function merge(a: RouteEntry[], b: RouteEntry[]): RouteEntry[] {
  if (!b.length) return a;
  const out: RouteEntry[] = [];
  let i = 0;
  for (const e of b) {
    let hi = a.length;
    while (i < hi) {
      const mid = (i + hi) >>> 1;
      if (compareEntries(a[mid]!, e) < 0) {
        for (; i <= mid; i++) out.push(a[i]!);
      } else hi = mid;
    }
    out.push(e);
  }
  for (; i < a.length; i++) out.push(a[i]!);
  return out;
}

export function routeTable(model: Model): RouteDef[] {
  return sortedEntries(model).map(({ route }) => ({ ...route }));
}

export function emitRoutes(model: Model): string {
  const sorted = sortedEntries(model);
  const rows = concat(sorted.map((e) => e.row), '\n');
  return `${TS_HEADER}import type { RouteDef } from 'svc/runtime/contract-types.ts';

export type Route = RouteDef;

/** Static routes come before parametrised ones that could match the same request. */
export const routes: readonly Route[] = [
${rows}
];
`;
}
