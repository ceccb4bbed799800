// Liveness and readiness for load balancers (docs/observability.md, the HAProxy check):
//   GET /v1/health/live   the process answers: 200 {"status":"ok"}, no database (also while starting)
//   GET /v1/health        ready: the database answers, no migration is pending for this build, and the
//   (and /health)         process's workers have started (not yet, or stopping: 503 unavailable)
// The readiness answer names each check, so an operator sees which one failed.
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { Database } from '../data/client.ts';
import { migrationsPending } from '../data/migrations-pending.ts';
import { ProblemError } from '../problem-error.ts';
import { problemResponse } from '../http/rest/problem-response.ts';

export const LIVE_PATH = '/v1/health/live';

/** The workers of a served process (webhooks, pipelines, the event listener): starting, ok, stopping. */
export type WorkersState = 'starting' | 'ok' | 'stopping';

export interface HealthChecks {
  database: 'ok' | 'unavailable';
  migrations: 'ok' | 'pending' | 'unknown';
  workers: WorkersState;
}

export interface Readiness {
  setWorkers(state: WorkersState): void;
  check(): Promise<{ ready: boolean; checks: HealthChecks }>;
}

/** A check gives up on the database after this long (a load balancer's check must not hang). */
const CHECK_TIMEOUT_MS = 2_000; // not a contract limit

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)))]).finally(() => clearTimeout(timer));
}

/** A process's readiness; workers start `ok` (createApp alone runs none that start later) until startServer says otherwise. */
export function createReadiness(database: Database, migrationsFolder: string): Readiness {
  let workers: WorkersState = 'ok';
  // Once this build's migrations are applied they stay applied: checked until then, not after.
  let migrated = false;
  return {
    setWorkers(state) {
      workers = state;
    },
    async check() {
      let databaseOk = true;
      let migrations: HealthChecks['migrations'] = migrated ? 'ok' : 'unknown';
      try {
        await within(database.execute('select 1'), CHECK_TIMEOUT_MS);
        if (!migrated) {
          migrated = !(await within(migrationsPending((q) => database.execute(q), migrationsFolder), CHECK_TIMEOUT_MS));
          migrations = migrated ? 'ok' : 'pending';
        }
      } catch {
        databaseOk = false;
      }
      const checks: HealthChecks = { database: databaseOk ? 'ok' : 'unavailable', migrations, workers };
      return { ready: databaseOk && migrations === 'ok' && workers === 'ok', checks };
    },
  };
}

/** The readiness answer: 200 with the checks, or 503 unavailable (a problem document) naming the failing ones. */
export async function readinessResponse(c: Context<AppEnv>, readiness: Readiness, versions: { contractVersion: string; apiVersion: string }, baseUrl: string): Promise<Response> {
  const { ready, checks } = await readiness.check();
  c.header('Cache-Control', 'no-store');
  if (ready) return c.json({ status: 'ok', contractVersion: versions.contractVersion, apiVersion: versions.apiVersion, checks });
  const failing = Object.entries(checks)
    .filter(([, v]) => v !== 'ok')
    .map(([k, v]) => `${k} ${v}`);
  return problemResponse(c, new ProblemError('unavailable', `This process is not ready: ${failing.join(', ')}.`, { extra: { checks } }), baseUrl);
}

/** The liveness answer: the process answers; nothing else is checked. */
export function livenessResponse(): Response {
  return new Response('{"status":"ok"}', { headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } });
}
