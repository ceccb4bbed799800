// The application_name every svc connection gives PostgreSQL: `svc:<role>:<host>:<pid>`, so that
// pg_stat_activity (and PgBouncer, which tracks it as a startup parameter and sets it on the server
// connection each transaction gets) says which process holds a connection and what for. The roles
// are listed in docs/observability.md ("Finding the holder of the horizon").
import { hostname } from 'node:os';

export type ConnectionRole = 'requests' | 'workers' | 'listener' | 'migrate' | 'seed';

/** PostgreSQL keeps the first NAMEDATALEN - 1 bytes of an application_name and cuts the rest. */
const NAME_BYTES = 63;

/**
 * `svc:<role>:<host>:<pid>`, at most 63 ASCII bytes: the host keeps its end (where container and
 * pod names differ) and loses characters PostgreSQL would print as `?`.
 */
export function applicationName(role: ConnectionRole, host: string = hostname(), pid: number = process.pid): string {
  const head = `svc:${role}:`;
  const tail = `:${pid}`;
  const clean = host.replace(/[^A-Za-z0-9.-]/g, '-') || 'unknown';
  const room = Math.max(0, NAME_BYTES - head.length - tail.length);
  return `${head}${clean.slice(Math.max(0, clean.length - room))}${tail}`;
}

/** postgres.js options naming a pool's connections (`connection` is sent in the startup message). */
export function named(role: ConnectionRole): { connection: { application_name: string } } {
  return { connection: { application_name: applicationName(role) } };
}
