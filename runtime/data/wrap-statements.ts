// One postgres.js client with every statement it sends passed through `unsafe`: its own, and those of
// each transaction (`begin`) and savepoint it opens, however deep. The proxies of
// runtime/data/prepared-statements.ts and runtime/data/statement-observer.ts are built on it.

export interface StatementSql {
  unsafe(query: string, params?: unknown[], options?: Record<string, unknown>): PromiseLike<unknown> & { values(): PromiseLike<unknown> };
  begin(...args: unknown[]): Promise<unknown>;
  savepoint(...args: unknown[]): Promise<unknown>;
}

/** Sends a statement on `sql` its own way (it must call `sql.unsafe` with the same arguments, or refuse). */
export type WrapUnsafe = (sql: StatementSql, query: string, params?: unknown[], options?: Record<string, unknown>) => unknown;

export function wrapStatements<C extends object>(original: C, wrap: WrapUnsafe): C {
  const sql = original as unknown as StatementSql;
  const unsafe = (query: string, params?: unknown[], options?: Record<string, unknown>) => wrap(sql, query, params, options);
  const inner =
    (method: 'begin' | 'savepoint') =>
    (...args: unknown[]) => {
      const fn = args.pop() as (tx: object) => unknown;
      return sql[method](...args, (tx: object) => fn(wrapStatements(tx, wrap)));
    };
  const begin = inner('begin');
  const savepoint = inner('savepoint');
  return new Proxy(original, {
    get: (target, prop, receiver) =>
      prop === 'unsafe' ? unsafe : prop === 'begin' ? begin : prop === 'savepoint' ? savepoint : Reflect.get(target, prop, receiver),
  });
}
