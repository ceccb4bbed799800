// Issue 39, rolling upgrades: processes built before migration 0016 beside this build. Such a process
// follows `seq` alone (its writers took an advisory lock; this build's take none) and moves the fan-out
// mark it shares with every process of its build. Here it is simulated faithfully (its SQL from git
// history, test/support/legacy-reader.ts) on a connection of its own, beside a real server of this
// build, while one of this build's writers holds an event uncommitted and a later one commits.
//
// The old fan-out passes the uncommitted event on its mark (webhooks_fanout_seq) and never fans it
// out; the old feed reader passes it too. This build's fan-out follows its own mark (moved to
// webhooks_fanout_position by migration 0017), so the receiver gets both events, each exactly once,
// and the old process's deliveries never duplicate one ((endpoint, event) is unique).
//
// PostgreSQL only (PGlite serves one process), on a cluster of the test's own: the test holds the
// visibility horizon on purpose, which on the shared server would stall every other test's events.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { MIGRATIONS_FOLDER } from '../../bin/paths.ts';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../runtime/data/client.ts';
import { settings, webhookDeliveries } from '../../runtime/data/schema.ts';
import { createEmitter, type EmittedEvent } from '../../runtime/events/events.ts';
import { FANOUT_SETTING } from '../../runtime/events/webhooks/deliveries.ts';
import { service } from '../../generated/registry.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { usingPostgres } from '../support/db.ts';
import { privatePostgresMissing, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';
import { legacyProcess, LEGACY_MARK, type LegacyProcess } from '../support/legacy-reader.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

const JOURNAL = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string; when: number }[] };
/** The inverse of each migration after 0016, to put a database back where a build of 0016 left it. */
const UNDO: Record<string, string[]> = {
  '0017_fanout_position': [],
  '0018_links_in_domain_tables': [
    'drop table campaign_messages, file_links',
    'drop index extractions_file',
    'alter table files add column project_id text, add column intake_id text, add column extraction_id text',
    'alter table files add constraint files_project_id_projects_id_fk foreign key (project_id) references projects(id)',
    'alter table files add constraint files_intake_id_intake_records_id_fk foreign key (intake_id) references intake_records(id)',
    'alter table outbound_messages add column campaign_id text',
    'alter table outbound_messages add constraint outbound_messages_campaign_id_campaigns_id_fk foreign key (campaign_id) references campaigns(id)',
  ],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor<T>(fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 8000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error('waitFor: timed out');
    await sleep(25);
  }
}

const run = usingPostgres() && privatePostgresMissing() === null ? describe : describe.skip;

run('mixed versions: a process from before 0016 beside this build (issue 39)', () => {
  let pg: PrivatePostgres;
  let url: string;
  let s: TestServer;
  let old: LegacyProcess;
  let receiver: Server;
  let rxUrl: string;
  const received: string[] = [];

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    url = await pg.createDatabase('svc');
    const database = await openDatabase({ databaseUrl: url, dataDir: '' });
    s = await startTestServer({ database });
    old = legacyProcess(url);
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        received.push((JSON.parse(body) as { id: string }).id);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    rxUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  }, 60_000);
  afterAll(async () => {
    await old?.close();
    await s?.close();
    await new Promise((r) => receiver?.close(() => r(undefined)));
    await pg?.stop();
  });

  /** One event written by this build's emitter in a transaction of its own, committed when `release` resolves. */
  function write(release: Promise<void>): { event: Promise<EmittedEvent>; committed: Promise<void> } {
    let emitted!: (e: EmittedEvent) => void;
    const event = new Promise<EmittedEvent>((r) => (emitted = r));
    const committed = s.database.transaction(async (tx) => {
      const sink: EmittedEvent[] = [];
      await createEmitter({ db: tx, actor: null, eventTypes: service.eventTypes, sink })('task.created', { clientId: s.credentials.clientId, subjectId: `tsk_${randomUUID()}` }, {});
      emitted(sink[0]!);
      await release;
    });
    return { event, committed };
  }

  it("the old fan-out and feed pass an event that commits late; this build's fan-out delivers every event exactly once", async () => {
    const res = await fetch(`${s.url}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ url: rxUrl, eventTypes: ['task.created'], clientId: s.credentials.clientId }),
    });
    expect(res.status).toBe(201);
    const endpointId = ((await res.json()) as { result: { id: string } }).result.id;
    await old.fanOut(); // the old process has caught up (its mark exists)
    const startMark = (await old.mark())!;

    // A holds its event (the lower seq) open; B commits a later one.
    let releaseA!: () => void;
    const a = write(new Promise<void>((r) => (releaseA = r)));
    const eventA = await a.event;
    const b = write(Promise.resolve());
    const eventB = await b.event;
    await b.committed;
    expect(eventA.seq).toBeLessThan(eventB.seq);

    // The old process, meanwhile: its feed reader and its fan-out pass A (not committed yet).
    expect((await old.eventsAfter(startMark)).map((e) => e.id)).toEqual([eventB.id]);
    expect(await old.fanOut()).toBe(1);
    expect(await old.mark()).toBe(eventB.seq);

    releaseA();
    await a.committed;

    // On its mark, A is lost to the old build for good: its reader and fan-out never come back to it.
    expect(await old.eventsAfter(eventB.seq)).toEqual([]);
    expect(await old.fanOut()).toBe(0);

    // This build's fan-out follows its own mark: both events reach the receiver, each once.
    await waitFor(() => received.includes(eventA.id) && received.includes(eventB.id));
    await sleep(1000); // a second delivery would have arrived by now
    expect(received.filter((id) => id === eventA.id)).toHaveLength(1);
    expect(received.filter((id) => id === eventB.id)).toHaveLength(1);
    const rows = await s.database.db.select({ eventId: webhookDeliveries.eventId }).from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId));
    expect(rows.map((r) => r.eventId).sort()).toEqual([eventA.id, eventB.id].sort());
    const [mark] = await s.database.db.select().from(settings).where(eq(settings.key, FANOUT_SETTING));
    expect(Number(mark!.value)).toBeGreaterThanOrEqual(eventA.seq);
  }, 30_000);

  it('migration 0017 starts this build at the mark the old build had reached', async () => {
    // The database as a build of 0016 left it: no 0017 row, no new mark, the old mark at 42; and no
    // process of this build running (its fan-out would make the new mark again before 0017 runs).
    await old.close();
    await s.close();
    old = undefined as never;
    s = undefined as never;
    const database = await openDatabase({ databaseUrl: url, dataDir: '' });
    const db = database.db;
    await db.delete(settings).where(eq(settings.key, FANOUT_SETTING));
    await db.insert(settings).values({ key: LEGACY_MARK, value: '42' }).onConflictDoUpdate({ target: settings.key, set: { value: '42' } });
    // Back to 0016: the migrations after it are undone (0017's only effect is the mark, set above) and
    // their rows deleted, so the next start applies 0017 and those after it again.
    const later = JOURNAL.entries.filter((e) => e.tag >= '0017_');
    const unknown = later.map((e) => e.tag).filter((t) => !(t in UNDO));
    expect(unknown, 'a migration after 0016 this test cannot undo: add its inverse to UNDO').toEqual([]);
    for (const e of [...later].reverse()) for (const statement of UNDO[e.tag]!) await database.execute(statement);
    await database.execute(`delete from drizzle.__drizzle_migrations where created_at >= ${Math.min(...later.map((e) => e.when))}`);
    await database.close();
    // A process of this build starts: it applies 0017.
    const again = await openDatabase({ databaseUrl: url, dataDir: '' });
    try {
      const rows = await again.db.select().from(settings).where(and(eq(settings.key, FANOUT_SETTING)));
      expect(rows.map((r) => r.value)).toEqual(['42']);
    } finally {
      await again.close();
    }
  }, 30_000);
});
