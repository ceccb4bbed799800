// Issue 39: a process never serves a database whose schema is newer than it knows (a migration in
// drizzle's table that is later than this build's newest): `svc serve` refuses at start with a clear
// message and a non-zero exit, and a running process that sees one (a newer build migrated while it
// ran) stops fanning out webhooks and says so once in its log, while the rest goes on. PGlite and
// PostgreSQL.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../runtime/data/client.ts';
import { MIGRATIONS_FOLDER } from '../../bin/paths.ts';
import { latestJournalEntry } from '../../runtime/data/migrations-pending.ts';
import { webhookDeliveries } from '../../runtime/data/schema.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { freshPostgresDatabase, usingPostgres } from '../support/db.ts';
import { runSvc } from '../support/process.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NEWER = latestJournalEntry(MIGRATIONS_FOLDER) + 60_000;
const newerMigration = `insert into drizzle.__drizzle_migrations (hash, created_at) values ('from-a-newer-build', ${NEWER})`;

describe('a schema newer than this build (issue 39)', () => {
  it('svc serve refuses to start on it: a clear message, exit 1', async () => {
    // The process's environment: PostgreSQL (a database of its own) or a PGlite directory.
    let databaseUrl: string | null = null;
    let dataDir = ':memory:';
    let cleanup: () => Promise<void>;
    if (usingPostgres()) {
      const fresh = await freshPostgresDatabase(process.env.DATABASE_URL!);
      databaseUrl = fresh.url;
      cleanup = fresh.drop;
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'svc-newer-'));
      dataDir = dir;
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
    try {
      const database = await openDatabase({ databaseUrl, dataDir });
      await database.execute(newerMigration);
      await database.close();
      const started = runSvc(['serve', '--port', '0'], databaseUrl ? { DATABASE_URL: databaseUrl } : { DATABASE_URL: '', SVC_DATA_DIR: dataDir });
      await expect(started).rejects.toThrow(/exited 1: svc serve: The database's schema is newer than this build of svc knows/);
      await expect(started).rejects.toThrow(/run that version or a later one/);
    } finally {
      await cleanup();
    }
  }, 90_000);

  describe('a running process', () => {
    let s: TestServer;
    let receiver: Server;
    let rxUrl: string;
    const received: string[] = [];
    beforeAll(async () => {
      s = await startTestServer();
      receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c));
        req.on('end', () => {
          received.push((JSON.parse(body) as { subjectId: string }).subjectId);
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      rxUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    }, 60_000);
    afterAll(async () => {
      await s?.close();
      await new Promise((r) => receiver?.close(() => r(undefined)));
    });

    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${s.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { result: { id: string } }).result.id;
    };

    it('stops fanning out webhooks once a newer build migrated, says so once, and serves the rest', async () => {
      const endpointId = await post('/v1/webhook-endpoints', { url: rxUrl, eventTypes: ['task.created'], clientId: s.credentials.clientId });
      const first = await post('/v1/tasks', { title: 'before the newer migration', clientId: s.credentials.clientId });
      for (let i = 0; i < 200 && !received.includes(first); i++) await sleep(25);
      expect(received).toContain(first);

      await s.database.execute(newerMigration);
      const second = await post('/v1/tasks', { title: 'after the newer migration', clientId: s.credentials.clientId });
      await sleep(1500); // six polls of the worker
      const deliveries = await s.database.db.select({ payload: webhookDeliveries.payload }).from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId));
      expect(deliveries.map((d) => (d.payload as { subjectId: string }).subjectId)).toEqual([first]);
      expect(received).not.toContain(second);
      const stopped = s.logs.filter((l) => l.includes('"webhook_fanout_stopped"'));
      expect(stopped).toHaveLength(1);
      expect(JSON.parse(stopped[0]!)).toMatchObject({ level: 'error', appliedMigration: NEWER, knownMigration: latestJournalEntry(MIGRATIONS_FOLDER) });
      expect(stopped[0]).toContain('newer than this build');

      // The feed still serves the event (only the fan-out stopped).
      const feed = await fetch(`${s.url}/v1/events?types=task.created&clientId=${s.credentials.clientId}`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } });
      expect(feed.status).toBe(200);
      expect(((await feed.json()) as { items: { subjectId: string }[] }).items.map((e) => e.subjectId)).toContain(second);
    }, 30_000);
  });
});
