// The polling side of `listen` (runtime/data/notifications.ts), what a process behind a transaction
// pooler without DATABASE_DIRECT_URL relies on: a watched watermark that moves wakes its listeners
// with '' once, one that does not move wakes nobody, an unlistened watch stops. And the session check
// that decides the mode: PostgreSQL itself passes it (the pooler failing it is in test/fleet/).
// PGlite, and PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import type { Database } from '../../runtime/data/client.ts';
import { isSessionConnection, WatermarkPoller } from '../../runtime/data/notifications.ts';
import { freshDatabase } from '../support/db.ts';

describe('watermark polling', () => {
  let database: Database;
  beforeAll(async () => {
    database = await freshDatabase();
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  it('wakes the channel once when its watermark moves, never when it does not, and stops when unlistened', async () => {
    const poller = new WatermarkPoller((q) => database.execute(q), undefined, 20);
    const heard: string[] = [];
    const other: string[] = [];
    const remove = await poller.add('svc_test_a', `select count(*)::text as w from settings where key like 'poll-%'`, (p) => heard.push(p));
    await poller.add('svc_test_b', `select count(*)::text as w from settings where key like 'other-%'`, (p) => other.push(p));
    await new Promise((r) => setTimeout(r, 120));
    expect(heard).toEqual([]);
    await database.execute(`insert into settings (key, value) values ('poll-1', 'x')`);
    for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 120));
    expect(heard).toEqual(['']);
    expect(other).toEqual([]);
    remove();
    await database.execute(`insert into settings (key, value) values ('poll-2', 'x')`);
    await new Promise((r) => setTimeout(r, 150));
    expect(heard).toEqual(['']);
    poller.stop();
  });

  it.runIf(Boolean(process.env.DATABASE_URL))('PostgreSQL itself is a session connection', async () => {
    expect(await isSessionConnection(postgres as never, process.env.DATABASE_URL!, 2000)).toBe(true);
    expect(database.notifications.mode).toBe('listen+poll');
  });
});
