// The sweeps delete in bounded batches (issue 39): each statement removes at most its batch, so none
// runs long or holds the events feed's horizon; the loop goes on until a short batch, so nothing
// expired is left and nothing live is touched. Idempotency records (1,000 a statement), webhook
// deliveries with their attempts (500), shown here with small batches over several of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../runtime/data/client.ts';
import { purgeExpiredIdempotency, PURGE_BATCH } from '../../runtime/pipeline/idempotency.ts';
import { DELIVERY_PURGE_BATCH, purgeExpired } from '../../runtime/events/webhooks/deliveries.ts';
import { freshDatabase } from '../support/db.ts';

let database: Database;
beforeAll(async () => {
  database = await freshDatabase();
}, 120_000);
afterAll(async () => {
  await database?.close();
});

const count = async (q: string) => Number((await database.execute<{ n: number | string }>(`select count(*) as n from ${q}`))[0]!.n);

describe('sweeps in bounded batches', () => {
  it('idempotency: every expired record goes, over several batches; live ones stay', async () => {
    expect(PURGE_BATCH).toBe(1_000);
    await database.execute(
      `insert into idempotency_records (credential_id, operation_id, key, fingerprint, state, expires_at)
       select 'key_sweep', 'tasks.create', 'k' || g, 'f', 'done', now() - interval '1 hour' from generate_series(1, 2500) g`,
    );
    await database.execute(
      `insert into idempotency_records (credential_id, operation_id, key, fingerprint, state, expires_at)
       select 'key_sweep', 'tasks.create', 'live' || g, 'f', 'done', now() + interval '1 hour' from generate_series(1, 10) g`,
    );
    expect(await purgeExpiredIdempotency(database.db, new Date(), 700)).toBe(2500);
    expect(await count(`idempotency_records where credential_id = 'key_sweep'`)).toBe(10);
    expect(await purgeExpiredIdempotency(database.db)).toBe(0);
  });

  it('webhook deliveries and their attempts: every old one goes, over several batches; recent ones stay', async () => {
    expect(DELIVERY_PURGE_BATCH).toBe(500);
    await database.execute(`insert into users (id, kind, name, email, role, oauth_subject) values ('usr_sweep', 'operator', 'S', 's@example.com', 'admin', 'sub-sweep')`);
    await database.execute(`insert into webhook_endpoints (id, owner_user_id, url, status) values ('whe_sweep', 'usr_sweep', 'https://example.com/h', 'enabled')`);
    const deliveries = (from: number, to: number, age: string) =>
      database.execute(
        `insert into webhook_deliveries (id, endpoint_id, event_id, event_type, payload, status, created_at)
         select 'whd_' || g, 'whe_sweep', 'evt_' || g, 'task.created', '{}'::jsonb, 'succeeded', now() - interval '${age}' from generate_series(${from}, ${to}) g`,
      );
    await deliveries(1, 1200, '40 days');
    await deliveries(1201, 1210, '1 day');
    await database.execute(`insert into webhook_attempts (delivery_id, attempt, at, duration_ms) select 'whd_' || g, 1, now(), 5 from generate_series(1, 1210) g`);
    const purged = await purgeExpired(database.db, new Date(), 450);
    expect(purged.deliveries).toBe(1200);
    expect(await count(`webhook_deliveries where endpoint_id = 'whe_sweep'`)).toBe(10);
    expect(await count(`webhook_attempts`)).toBe(10);
  });
});
