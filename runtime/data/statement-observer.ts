// Each statement a postgres.js client sends, observable: runtime/observability sets an observer when
// tracing is on (a `db.statement` span per statement, inside the transaction's span), so a write's
// wall time can be split into its statements and the gaps between them (docs/writes.md). With no
// observer (the default) a statement costs one null check more.
import { wrapStatements } from './wrap-statements.ts';

/** Runs one statement (`run`); `operation` is its first SQL keyword (select, insert, with, begin…). */
export type StatementObserver = <T>(operation: string, run: () => PromiseLike<T>) => PromiseLike<T>;

let observer: StatementObserver | null = null;

export function setStatementObserver(fn: StatementObserver | null): void {
  observer = fn;
}

const operationOf = (query: string) => (/^\s*([a-z]+)/i.exec(query)?.[1] ?? 'statement').toLowerCase();

/**
 * The same client, its statements (and its transactions' and savepoints') passed to the observer when
 * one is set. `prepare`: each statement also named (runtime/data/prepared-statements.ts), in this same
 * layer: one proxy per transaction and one call per statement fewer than a layer of its own
 * (docs/writes.md, issue 41).
 */
export function observedStatements<C extends object>(original: C, prepare = false): C {
  return wrapStatements(original, (sql, query, params, given) => {
    const options = prepare ? { ...given, prepare: true } : given;
    const watch = observer;
    if (!watch) return sql.unsafe(query, params, options);
    const operation = operationOf(query);
    return {
      values: () => watch(operation, () => sql.unsafe(query, params, options).values()),
      then: <A, B>(ok?: (v: unknown) => A, ko?: (e: unknown) => B) => Promise.resolve(watch(operation, () => sql.unsafe(query, params, options))).then(ok, ko),
    };
  });
}
