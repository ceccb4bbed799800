// Background workers an API hands the runtime (Registry.workers): work the API's own tables need done
// outside a request (the Platform API's pipeline runner, say). The runtime knows none of them: every
// served process starts each one when workers are on (config.workersEnabled, SVC_WORKERS), after its
// event hub, and stops them first when it closes, before the HTTP server and the database. A worker
// keeps its own pace and lease (it claims work with FOR UPDATE SKIP LOCKED and renews its claims), so
// any number of processes share it.
import type { Config } from './config.ts';
import type { Database } from './data/client.ts';

export interface WorkerContext {
  /** The workers' pool (Database.workers): background work never takes a request's connection. */
  database: Database;
  config: Config;
  /** Log lines (runtime/observability/log.ts logLine). */
  log: (line: string) => void;
}

export interface RunningWorker {
  /** Claims and does work until none is left (tests; optional). */
  drain?(): Promise<number>;
  /** Stops claiming; resolves when the work in hand has ended or been left to its lease. */
  stop(): Promise<void>;
}

export interface BackgroundWorker {
  /** A short name, for logs and the started server's handle. */
  readonly name: string;
  start(context: WorkerContext): RunningWorker;
}

/** Starts each worker; the result stops them all, in the reverse order. */
export function startWorkers(workers: readonly BackgroundWorker[], context: WorkerContext): { running: ReadonlyMap<string, RunningWorker>; stop(): Promise<void> } {
  const running = new Map(workers.map((w) => [w.name, w.start(context)] as const));
  return {
    running,
    async stop() {
      for (const w of [...running.values()].reverse()) await w.stop();
    },
  };
}
