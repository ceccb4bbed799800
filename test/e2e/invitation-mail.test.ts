// The invitation e-mail of memberships.invite (issue 9) through a real SMTP receiver on loopback
// (smtp-server), with SVC_SMTP_URL pointing at it: an approved invitation is received exactly once;
// a dry run and a rejected proposal queue nothing and send nothing. On PGlite and on PostgreSQL
// when DATABASE_URL is set. (memberships.invite is not an MCP tool: REST only.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startServerWithIdp, type World } from '../support/world.ts';

interface Mail {
  from: string;
  to: string[];
  raw: string;
}
let w: World;
let smtp: SMTPServer;
const inbox: Mail[] = [];
const ACME = 'cli_demo_acme';
const LOOP_MS = 5_000; // not a contract limit: the outbox delivery loop's interval (runtime/events/outbox.ts)

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const port = (smtp.server.address() as AddressInfo).port;
  w = await startServerWithIdp({ smtpUrl: `smtp://127.0.0.1:${port}`, smtpFrom: 'invitations@svc.example' });
}, 60_000);
afterAll(async () => {
  await w?.close();
  await new Promise<void>((resolve) => smtp?.close(() => resolve()));
});

const sql = <T = Record<string, unknown>>(q: string) => w.s.database.execute(q) as Promise<T[]>;
const outboxFor = (email: string) => sql<{ status: string }>(`select status from outbound_messages where recipient = '${email}'`);
const mailsTo = (email: string) => inbox.filter((m) => m.to.includes(email));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(fn: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > until) throw new Error('waitFor: timed out');
    await sleep(50);
  }
}

describe('the invitation e-mail', () => {
  it('a dry run and a rejected proposal queue nothing and send nothing', async () => {
    const email = 'dry.run@acme.example';
    const planned = await w.rest('clientAdmin', 'memberships.invite', { client_id: ACME, email, role: 'tasks:read' }, { prefer: 'dry-run' });
    expect(planned.status).toBe(200);
    expect(planned.body.outcome).toBe('planned');

    const rejectedEmail = 'rejected@acme.example';
    const proposed = await w.rest('clientAdmin', 'memberships.invite', { client_id: ACME, email: rejectedEmail, role: 'tasks:read' });
    expect(proposed.status).toBe(202);
    // The proposal's pre-flight ran the write and rolled it back: nothing queued.
    expect(await outboxFor(rejectedEmail)).toEqual([]);
    const admin = await w.idp.issueToken({ sub: w.c.adminSub as string, aud: `${w.s.config.baseUrl}/mcp`, scope: 'openid email profile', client_id: w.c.oauthClientId });
    const rejected = await fetch(`${w.s.url}/v1/approvals/${proposed.body.approval.id}:reject`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ comment: 'not this one' }),
    });
    expect(rejected.status).toBe(200);
    expect(((await rejected.json()) as { result: { status: string } }).result.status).toBe('rejected');

    // A whole delivery pass later: no row, no mail, for either.
    await sleep(LOOP_MS + 500);
    for (const e of [email, rejectedEmail]) {
      expect(await outboxFor(e)).toEqual([]);
      expect(mailsTo(e)).toEqual([]);
    }
    expect(await sql(`select 1 from memberships where email in ('${email}', '${rejectedEmail}')`)).toEqual([]);
  });

  it('an approved invitation reaches the SMTP receiver exactly once', async () => {
    const email = 'casey.colleague@acme.example';
    const proposed = await w.rest('clientAdmin', 'memberships.invite', { client_id: ACME, email: 'Casey.Colleague@Acme.example', name: 'Casey', role: 'tasks:read' });
    expect(proposed.status).toBe(202);
    expect(await outboxFor(email)).toEqual([]);
    const approved = await w.approve(proposed.body.approval.id);
    expect(approved.status).toBe(200);
    expect(approved.body.result.status).toBe('approved');
    const membershipId = approved.body.result.result.id as string;

    await waitFor(() => mailsTo(email).length > 0, LOOP_MS * 2);
    const [mail] = mailsTo(email);
    expect(mail!.from).toBe('invitations@svc.example');
    expect(mail!.raw).toMatch(/^Subject: You are invited to act for Acme/m);
    expect(mail!.raw).toContain('with the permission tasks:read');
    expect(mail!.raw).toContain(membershipId);
    // The row is marked sent when the delivery pass commits, just after the SMTP exchange.
    const until = Date.now() + 3000;
    while ((await outboxFor(email))[0]?.status !== 'sent' && Date.now() < until) await sleep(50);
    expect((await outboxFor(email)).map((r) => r.status)).toEqual(['sent']);

    // Later passes send nothing again.
    await sleep(LOOP_MS + 500);
    expect(mailsTo(email)).toHaveLength(1);
    expect(await outboxFor(email)).toHaveLength(1);
  });
});
