import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirLockedError, LOCK_FILE_NAME, openDatabase, processStart, type Database } from '../../runtime/data/client.ts';
import { clients, settings } from '../../runtime/data/schema.ts';
import { tasks } from '../../handlers/data/schema.ts';
import { CURSOR_SECRET_SETTING } from '../../runtime/data/paging.ts';
import { freshDatabase, usingPostgres } from '../support/db.ts';

const driver = usingPostgres() ? 'postgres' : 'pglite';

describe(`database (${driver})`, () => {
  let database: Database;
  beforeAll(async () => {
    database = await freshDatabase();
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  it('opens with the expected driver and applies every migration', async () => {
    expect(database.kind).toBe(driver);
    const rows = await database.execute<{ table_name: string }>(
      sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
    );
    const names = rows.map((r) => r.table_name);
    for (const t of ['clients', 'users', 'memberships', 'api_keys', 'projects', 'tasks', 'task_comments', 'approvals', 'events', 'settings']) {
      expect(names).toContain(t);
    }
  });

  it('creates a per-database cursor secret at open', async () => {
    const rows = await database.db.select().from(settings).where(eq(settings.key, CURSOR_SECRET_SETTING));
    expect(rows).toHaveLength(1);
    expect(rows[0].value.length).toBeGreaterThanOrEqual(32);
  });

  it('execute returns plain rows on either driver (string or sql template)', async () => {
    const a = await database.execute<{ n: number }>('select 1::int as n');
    expect(a).toEqual([{ n: 1 }]);
    const b = await database.execute<{ s: string }>(sql`select ${'x'}::text as s`);
    expect(b).toEqual([{ s: 'x' }]);
    expect(Array.isArray(b)).toBe(true);
  });

  it('commits a transaction and rolls back a failing one', async () => {
    await database.transaction(async (tx) => {
      await tx.insert(clients).values({ id: 'cli_tx_ok', name: 'Ok', status: 'active' });
    });
    await expect(
      database.transaction(async (tx) => {
        await tx.insert(clients).values({ id: 'cli_tx_bad', name: 'Bad', status: 'active' });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const ids = (await database.db.select({ id: clients.id }).from(clients)).map((r) => r.id);
    expect(ids).toContain('cli_tx_ok');
    expect(ids).not.toContain('cli_tx_bad');
  });

  it('runs many concurrent transactions without deadlock', async () => {
    const n = 25;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        database.transaction(async (tx) => {
          await tx.insert(tasks).values({
            id: `tsk_conc_${i}`,
            clientId: null,
            title: `t${i}`,
            status: 'open',
            priority: 'normal',
            createdBy: 'usr_x',
          });
          const [row] = await tx.select({ c: sql<number>`count(*)::int` }).from(tasks);
          return row.c;
        }),
      ),
    );
    const [row] = await database.execute<{ c: number }>(sql`select count(*)::int as c from tasks where id like 'tsk_conc_%'`);
    expect(row.c).toBe(n);
  }, 30_000);

  it('delivers NOTIFY to a listener, and stops after unlisten', async () => {
    const got: string[] = [];
    const unlisten = await database.listen('svc_test_chan', (p) => got.push(p));
    await database.notify('svc_test_chan', 'hello');
    await waitFor(() => got.length === 1);
    expect(got).toEqual(['hello']);
    await unlisten();
    await database.notify('svc_test_chan', 'again');
    await new Promise((r) => setTimeout(r, 150));
    expect(got).toEqual(['hello']);
  });

  it('refuses channel names that are not identifiers', async () => {
    await expect(database.notify('bad channel; drop', 'x')).rejects.toThrow(/channel/);
  });
});

// PGlite only, whatever DATABASE_URL says: run where it is unset (the PGlite pass), not again on PostgreSQL.
describe.skipIf(usingPostgres())('PGlite data directory lock', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second opener, naming the holder pid, and frees the directory on close', async () => {
    const first = await openDatabase({ databaseUrl: null, dataDir: dir });
    try {
      const lock = JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')) as { pid: number };
      expect(lock.pid).toBe(process.pid);
      const second = openDatabase({ databaseUrl: null, dataDir: dir });
      await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
      await expect(openDatabase({ databaseUrl: null, dataDir: dir })).rejects.toThrow(String(process.pid));
      await first.execute('select 1');
    } finally {
      await first.close();
    }
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
    const again = await openDatabase({ databaseUrl: null, dataDir: dir });
    await again.close();
  }, 60_000);

  it('refuses a directory held by another live process', async () => {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.ppid))']);
    // Our parent (the shell or vitest runner) is alive: use its pid as a live holder.
    const livePid = Number(child.stdout.toString()) || process.ppid;
    writeFileSync(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: livePid, token: 'other' }));
    try {
      await expect(openDatabase({ databaseUrl: null, dataDir: dir })).rejects.toThrow(`process ${livePid}`);
    } finally {
      rmSync(join(dir, LOCK_FILE_NAME), { force: true });
    }
  });

  it('takes over a lock whose pid now belongs to another process (a reused pid: another start time)', async () => {
    const livePid = process.ppid;
    const start = processStart(livePid);
    if (start === null) return; // no /proc here: the pid alone decides
    writeFileSync(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: livePid, processStart: String(Number(start) + 1), token: 'reused' }));
    const db = await openDatabase({ databaseUrl: null, dataDir: dir });
    try {
      expect((JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')) as { pid: number }).pid).toBe(process.pid);
    } finally {
      await db.close();
    }
    // The same live process with its real start time still holds the directory.
    writeFileSync(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: livePid, processStart: start, token: 'live' }));
    try {
      await expect(openDatabase({ databaseUrl: null, dataDir: dir })).rejects.toThrow(`process ${livePid}`);
    } finally {
      rmSync(join(dir, LOCK_FILE_NAME), { force: true });
    }
  }, 60_000);

  it('takes over a stale lock left by a dead process', async () => {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const deadPid = Number(child.stdout.toString());
    expect(deadPid).toBeGreaterThan(0);
    writeFileSync(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: deadPid, token: 'stale' }));
    const db = await openDatabase({ databaseUrl: null, dataDir: dir });
    try {
      const lock = JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')) as { pid: number };
      expect(lock.pid).toBe(process.pid);
    } finally {
      await db.close();
    }
  }, 60_000);
});

async function waitFor(cond: () => boolean, ms = 3000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
