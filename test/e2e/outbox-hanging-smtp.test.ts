// The e-mail outbox holds no transaction while it sends (issue 39): against an SMTP server that accepts
// the connection and never says a word, a delivery pass claims its batch in a short transaction, commits,
// and waits on the server outside any transaction. Meanwhile another write on the same database commits
// at once (on PGlite, whose one connection a held transaction would block, it would wait for the pass),
// and on PostgreSQL no connection of the database is idle in a transaction. When nodemailer's greeting
// bound ends the send, the message is queued again, due as before, with the error recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../runtime/data/client.ts';
import { outboundMessages, settings } from '../../runtime/data/schema.ts';
import { deliverDue, mailSender } from '../../runtime/events/outbox.ts';
import { freshDatabase } from '../support/db.ts';
import { startSilentServer, type SilentServer } from '../support/silent-server.ts';
import { longIdleTransactions } from '../support/idle-transactions.ts';

let database: Database;
let silent: SilentServer;

beforeAll(async () => {
  database = await freshDatabase();
  silent = await startSilentServer();
}, 120_000);
afterAll(async () => {
  await silent?.close();
  await database?.close();
});

describe('the outbox against an SMTP server that never answers', () => {
  it('sends outside any transaction: other writes go on, nothing idles in a transaction; the message is retried later', async () => {
    const due = new Date(Date.now() - 60_000);
    await database.db.insert(outboundMessages).values({ id: 'obm_hang1', channel: 'email', recipient: 'a@example.com', subject: 's', body: 'b', status: 'queued', notBefore: due });
    const port = silent.port;
    const sender = mailSender(`smtp://127.0.0.1:${port}`, 'outbox@svc.example', { connectionTimeout: 2_000, greetingTimeout: 3_000, socketTimeout: 3_000 });

    const passStarted = Date.now();
    const pass = deliverDue(database, sender);
    const until = Date.now() + 5_000;
    while (silent.sockets.length === 0) {
      if (Date.now() > until) throw new Error('the pass never connected');
      await new Promise((r) => setTimeout(r, 20));
    }

    const started = Date.now();
    await database.transaction(async (tx) => {
      await tx.insert(settings).values({ key: 'outbox-hang:beside', value: 'x' });
    });
    expect(Date.now() - started, 'a write beside the pass waited for it').toBeLessThan(1_000);
    await new Promise((r) => setTimeout(r, 1_200)); // a transaction held across the hang is over 1 s old by now
    expect(await longIdleTransactions(database)).toEqual([]);
    const [leased] = await database.db.select().from(outboundMessages).where(eq(outboundMessages.id, 'obm_hang1'));
    expect(leased!.notBefore.getTime(), 'claimed: leased ahead').toBeGreaterThan(Date.now());

    expect(await pass).toEqual({ sent: 0, failed: 0, retried: 1 });
    // The send was bounded by its greeting timeout (3 s here), not nodemailer's default of 30 s.
    expect(Date.now() - passStarted).toBeLessThan(10_000);
    const [row] = await database.db.select().from(outboundMessages).where(eq(outboundMessages.id, 'obm_hang1'));
    expect(row).toMatchObject({ status: 'queued', attempts: 1 });
    expect(row!.lastError).toMatch(/greeting|timeout/i);
    expect(row!.notBefore.getTime()).toBe(due.getTime());
  }, 60_000);
});
