// Every svc transaction on PostgreSQL is bounded (docs/decisions.md "Bounded transactions"): the events
// feed publishes only below the cluster's oldest open transaction, so one transaction left open (a
// handler awaiting a peer inside it, a statement stuck on a lock) would hold back every tenant's events.
//
// - statement_timeout: a statement running longer is cancelled (57014). It is longer than the
//   idempotency claim's own lock wait (CLAIM_WAIT_MS), which answers a retryable 409 first.
// - idle_in_transaction_session_timeout: a connection idle inside a transaction longer than this is
//   ended by the server, its transaction rolled back (the request fails; the pool opens another).
//
// How they reach the server: on a session connection (PostgreSQL itself) as startup parameters, which
// cost no round trip and bound every statement; through a transaction pooler (PgBouncer refuses
// unknown startup parameters, and a session SET would leak to whoever gets the server connection next)
// as SET LOCAL at the start of each transaction, one simple-protocol message. PGlite needs neither: its
// one connection lives in the process and no other transaction shares its horizon.

export interface TransactionBounds {
  /** statement_timeout in ms; 0: none. */
  statementMs: number;
  /** idle_in_transaction_session_timeout in ms; 0: none. */
  idleInTransactionMs: number;
}

export const DEFAULT_TRANSACTION_BOUNDS: TransactionBounds = { statementMs: 10_000, idleInTransactionMs: 5_000 }; // not a contract limit

/** The bounds as startup parameters (postgres.js `connection`), for a session connection. */
export function boundParameters(b: TransactionBounds): Record<string, string> {
  const out: Record<string, string> = {};
  if (b.statementMs > 0) out.statement_timeout = String(b.statementMs);
  if (b.idleInTransactionMs > 0) out.idle_in_transaction_session_timeout = String(b.idleInTransactionMs);
  return out;
}

/** The bounds as one SET LOCAL message for the start of a transaction; null when both are off. */
export function boundStatement(b: TransactionBounds): string | null {
  const parts: string[] = [];
  if (b.statementMs > 0) parts.push(`set local statement_timeout = ${Math.trunc(b.statementMs)}`);
  if (b.idleInTransactionMs > 0) parts.push(`set local idle_in_transaction_session_timeout = ${Math.trunc(b.idleInTransactionMs)}`);
  return parts.length > 0 ? parts.join('; ') : null;
}

interface BeginningClient {
  begin(...args: unknown[]): Promise<unknown>;
}
interface TransactionSql {
  unsafe(query: string, ...rest: unknown[]): { simple(): PromiseLike<unknown> };
  savepoint(...args: unknown[]): Promise<unknown>;
}

/** Thrown by a statement a transaction sends after it has ended (its connection closed under it). */
export class TransactionEndedError extends Error {
  constructor() {
    super('the transaction has ended (its connection was closed, e.g. past idle_in_transaction_session_timeout); this statement was not sent');
    this.name = 'TransactionEndedError';
  }
}

/**
 * The transaction's `sql`, refusing every statement once `ended()`. When the server ends a connection
 * inside a transaction (the idle bound), postgres.js 3.4.9 rejects the transaction at once but lets the
 * callback go on: its next statement was written to the closed socket from a setImmediate, an uncaught
 * TypeError that ends the process (porsager/postgres#1133, #1208), or, had the connection reconnected for
 * queued queries, run outside any transaction (#1155). Refused here, it never reaches the connection.
 */
function guarded(sql: TransactionSql, ended: () => boolean): TransactionSql {
  const unsafe = (...args: Parameters<TransactionSql['unsafe']>) => {
    if (ended()) throw new TransactionEndedError();
    return sql.unsafe(...args);
  };
  const savepoint = (...args: unknown[]) => {
    if (ended()) return Promise.reject(new TransactionEndedError());
    const fn = args.pop() as (inner: TransactionSql) => unknown;
    return sql.savepoint(...args, (inner: TransactionSql) => fn(guarded(inner, ended)));
  };
  return new Proxy(sql, { get: (target, prop, receiver) => (prop === 'unsafe' ? unsafe : prop === 'savepoint' ? savepoint : Reflect.get(target, prop, receiver)) });
}

/**
 * The same postgres.js client, each `begin` first sending `statement` (SET LOCAL …, when given) on its
 * connection, and its statements refused once the transaction has ended (guarded, above).
 */
export function boundedTransactions<C extends object>(original: C, statement: string | null): C {
  const client = original as unknown as BeginningClient;
  const begin = (...args: unknown[]) => {
    const fn = args.pop() as (sql: TransactionSql) => unknown;
    let ended = false;
    return client
      .begin(...args, async (sql: TransactionSql) => {
        if (statement) await sql.unsafe(statement).simple();
        // Once the transaction has ended under it, the callback's end is kept from postgres.js: its
        // COMMIT or ROLLBACK would be written to the closed socket (the crash above). The caller has
        // its rejection already; the settled callback is dropped.
        const never = new Promise<never>(() => undefined);
        return Promise.resolve(fn(guarded(sql, () => ended))).then(
          (value) => (ended ? never : value),
          (err: unknown) => (ended ? never : Promise.reject(err)),
        );
      })
      .finally(() => {
        ended = true;
      });
  };
  return new Proxy(original, { get: (target, prop, receiver) => (prop === 'begin' ? begin : Reflect.get(target, prop, receiver)) });
}

/** Reads SVC_DB_STATEMENT_TIMEOUT_MS and SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS (whole ms, 0 turns one off). */
export function transactionBoundsFrom(env: Record<string, string | undefined>): TransactionBounds {
  const read = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of milliseconds (0 turns the bound off); got "${raw}"`);
    return n;
  };
  return {
    statementMs: read('SVC_DB_STATEMENT_TIMEOUT_MS', DEFAULT_TRANSACTION_BOUNDS.statementMs),
    idleInTransactionMs: read('SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', DEFAULT_TRANSACTION_BOUNDS.idleInTransactionMs),
  };
}
