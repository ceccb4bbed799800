// Database transactions, observed: a span per transaction and the transaction metrics. postgres.js
// keeps its pool to itself (no count of busy connections or queued queries is public) and PGlite has
// one connection, so what is measured is what this process can see honestly from outside the driver:
// each transaction's wait (from asking for it to its function starting, i.e. a free connection plus
// BEGIN; on PGlite, its turn on the one connection), how long it ran, and how many transactions are
// waiting or holding a connection right now. Queries outside a transaction (reads) are not counted.
import type { Database, Db } from '../data/client.ts';
import { inSpan, metrics, tracing } from './index.ts';

/** Transactions of this process now (read by the svc_db_transactions gauge at scrape time). */
export const dbStats = { active: 0, waiting: 0 };

/**
 * `database` with its transactions observed, those of its workers' pool too (Database.workers); the
 * same object's queries, listeners and close otherwise.
 */
export function observedDatabase(database: Database): Database {
  const observed: Database = { ...database, transaction: observedTransaction(database) };
  if (database.workers === database) observed.workers = observed;
  else {
    const workers: Database = { ...database.workers, transaction: observedTransaction(database.workers) };
    workers.workers = workers;
    observed.workers = workers;
  }
  return observed;
}

function observedTransaction(database: Database): Database['transaction'] {
  return <T>(fn: (tx: Db) => Promise<T>): Promise<T> =>
    // A span only inside a traced request or delivery: the workers' polling starts no trace of its own.
    inSpan('db.transaction', { 'db.system': 'postgresql', 'db.operation.name': 'transaction' }, async () => {
      const asked = performance.now();
      let began = 0;
      dbStats.waiting++;
      try {
        const value = await database.transaction((tx) => {
          began = performance.now();
          // The wait for a connection (its slot, then BEGIN), on the transaction's span.
          tracing?.annotate({ 'svc.db.wait_ms': Math.round((began - asked) * 1000) / 1000 });
          dbStats.waiting--;
          dbStats.active++;
          return fn(tx);
        });
        metrics.transactionEnded((began - asked) / 1000, (performance.now() - began) / 1000, true);
        return value;
      } catch (err) {
        if (began) metrics.transactionEnded((began - asked) / 1000, (performance.now() - began) / 1000, false);
        throw err;
      } finally {
        if (began) dbStats.active--;
        else dbStats.waiting--;
      }
    }, true);
}
