// postgres.js without pipelining, for a URL that may be a transaction pooler (runtime/data/client.ts).
// When every connection of its pool is busy, postgres.js sends the next query on a busy connection
// before the query in flight has answered. PgBouncer 1.18 in transaction mode hands the server
// connection to another client at the first answer's ReadyForQuery, so the second answer never
// reached its query and the request hung for good (test/fleet/crash.test.ts, under kill -9). Its
// `max_pipeline: 0` would stop that but also stops `sql.begin` from reserving its connection. So
// every statement and every transaction takes one of `max` slots first: postgres.js then always
// finds an idle connection and never pipelines. A transaction's own statements run on its reserved
// connection inside its slot. Drizzle calls only `unsafe(…)` (awaited, or `.values()`) and `begin`.

/** The two methods of a postgres.js client that drizzle calls. */
interface PipelinedClient {
  unsafe(query: string, params?: unknown[], options?: unknown): PromiseLike<unknown> & { values(): PromiseLike<unknown> };
  begin(...args: unknown[]): Promise<unknown>;
}

/** At most `max` callers at once; the others wait in order. */
export function gate(max: number): <T>(fn: () => PromiseLike<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => PromiseLike<T>): Promise<T> => {
    if (running >= max) await new Promise<void>((r) => waiting.push(r));
    else running++;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** The same client, with its top-level statements and transactions gated to `max` at once. */
export function unpipelined<C extends object>(original: C, max: number): C {
  const client = original as unknown as PipelinedClient;
  const run = gate(max);
  const unsafe = (query: string, params?: unknown[], options?: unknown) => ({
    values: () => run(() => client.unsafe(query, params, options).values()),
    then: <A, B>(ok?: (v: unknown) => A, ko?: (e: unknown) => B) => run(() => client.unsafe(query, params, options)).then(ok, ko),
  });
  const begin = (...args: unknown[]) => run(() => client.begin(...args));
  return new Proxy(original, {
    get: (target, prop, receiver) => (prop === 'unsafe' ? unsafe : prop === 'begin' ? begin : Reflect.get(target, prop, receiver)),
  });
}
