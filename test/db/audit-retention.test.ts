// Audit retention (SVC_AUDIT_RETENTION_DAYS, runtime/pipeline/audit-retention.ts): the sweep deletes the rows
// older than the retention and keeps every other row as it was; the setting refuses a retention
// shorter than the events' 30 days. PGlite, and PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRetentionDays, purgeExpiredAudit } from '../../runtime/pipeline/audit-retention.ts';
import { loadConfig } from '../../runtime/config.ts';
import type { Database } from '../../runtime/data/client.ts';
import { auditLog } from '../../runtime/data/schema.ts';
import { freshDatabase } from '../support/db.ts';

const DAY = 86_400_000;

describe('audit retention', () => {
  let database: Database;
  beforeAll(async () => {
    database = await freshDatabase();
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  it('the setting: 365 days by default, at least 30, a whole number', () => {
    expect(loadConfig({}).auditRetentionDays).toBe(365);
    expect(loadConfig({ SVC_AUDIT_RETENTION_DAYS: '90' }).auditRetentionDays).toBe(90);
    for (const bad of ['29', '0', '-5', '1.5', 'year']) expect(() => auditRetentionDays(bad, 30)).toThrow(/SVC_AUDIT_RETENTION_DAYS .*at least 30/);
  });

  it('the sweep deletes rows older than the retention and keeps the rest unchanged', async () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const row = (daysAgo: number, i: number) => ({
      at: new Date(now.getTime() - daysAgo * DAY),
      requestId: `req_ret_${daysAgo}_${i}`,
      transport: 'rest',
      method: 'GET',
      path: '/v1/meta',
      status: 200,
      outcome: 'read',
      durationMs: 1,
    });
    // Ids follow time, as written by the server; a few young rows precede old ones (written late).
    const rows = [...Array.from({ length: 30 }, (_, i) => row(400, i)), row(10, 0), ...Array.from({ length: 20 }, (_, i) => row(366, i)), ...Array.from({ length: 25 }, (_, i) => row(5, i + 1))];
    await database.db.insert(auditLog).values(rows);
    const keptBefore = await database.execute<{ request_id: string; at: unknown }>(`select request_id, at from audit_log where request_id like 'req_ret_10_%' or request_id like 'req_ret_5_%' order by id`);

    expect(await purgeExpiredAudit(database.db, 365, now)).toBe(50);
    const left = await database.execute<{ request_id: string; at: unknown }>(`select request_id, at from audit_log where request_id like 'req_ret_%' order by id`);
    expect(left).toEqual(keptBefore);
    expect(left).toHaveLength(26);
    // Nothing more to do: a second sweep deletes nothing.
    expect(await purgeExpiredAudit(database.db, 365, now)).toBe(0);
    // A shorter retention reaches the younger rows.
    expect(await purgeExpiredAudit(database.db, 30, new Date(now.getTime() + 30 * DAY))).toBe(26);
  });
});
