// Shared helpers of the REST end-to-end tests: a typed openapi-fetch client per credential.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/types.ts';
import type { Database } from '../../runtime/data/client.ts';

export type Api = Client<paths>;

export function api(baseUrl: string, credential?: string, headers: Record<string, string> = {}): Api {
  return createClient<paths>({
    baseUrl,
    headers: { ...(credential ? { authorization: `Bearer ${credential}` } : {}), ...headers },
  });
}

export const RATE_HEADERS = ['ratelimit-policy', 'ratelimit', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
export const COMMON_HEADERS = ['x-svc-api-version', 'x-request-id', 'traceparent', ...RATE_HEADERS];

export function missingHeaders(res: Response): string[] {
  return COMMON_HEADERS.filter((h) => !res.headers.get(h));
}

export async function rowCount(database: Database, table: string): Promise<number> {
  const [row] = await database.execute<{ n: string }>(`select count(*)::text as n from ${table}`);
  return Number(row!.n);
}

export async function tableCounts(database: Database, tables: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = await rowCount(database, t);
  return out;
}

export const WRITE_TABLES = ['tasks', 'projects', 'task_comments', 'approvals', 'events', 'idempotency_records'];
