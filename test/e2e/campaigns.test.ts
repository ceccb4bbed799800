// campaigns.* end to end over REST (openapi-fetch) and MCP (SDK Client), on PGlite and on
// PostgreSQL when DATABASE_URL is set: client-scope visibility, the campaign state machine,
// propose_send (Tier 2, open world) sending nothing before approval or in a dry run, the
// campaign_send operation and the outbox, and delivery through nodemailer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue, mailSender, startDeliveryLoop, type Sender } from '../../runtime/events/outbox.ts';
import { campaignOutbox } from '../../handlers/campaigns.ts';
import { startServerWithIdp, type Answer, type CallerName, type World } from '../support/world.ts';

let w: World;
const ACME = 'cli_demo_acme';
const GLOBEX = 'cli_demo_globex';
const TRANSPORTS = ['rest', 'mcp'] as const;

beforeAll(async () => {
  w = await startServerWithIdp();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

const call = (t: (typeof TRANSPORTS)[number], who: CallerName, op: string, input: Record<string, unknown> = {}) =>
  t === 'rest' ? w.rest(who, op, input) : w.mcp(who, op, input);
const ids = (res: Answer) => (res.body.items as { id: string }[]).map((r) => r.id);
async function sql<T = Record<string, unknown>>(q: string): Promise<T[]> {
  return w.s.database.execute(q) as Promise<T[]>;
}
async function addCampaign(id: string, clientId: string, status = 'draft', channel = 'email', recipients = 2): Promise<void> {
  await sql(`insert into campaigns (id, client_id, name, kind, channel, status, subject, body) values ('${id}', '${clientId}', '${id}', 'reminder', '${channel}', '${status}', 'Hello', 'Enrollment opens Monday.')`);
  for (let i = 0; i < recipients; i++) {
    await sql(`insert into campaign_recipients (id, campaign_id, address) values ('rcp_${id}_${i}', '${id}', '${channel === 'email' ? `m${i}@${id}.example` : `+1555000${i}`}')`);
  }
}
const sentMail: { to: string; subject: string }[] = [];
const testSender: Sender = {
  channels: ['email'],
  async send(m) {
    sentMail.push({ to: m.recipient, subject: m.subject });
  },
};

describe('campaigns.list: client scope (rule 5), for every caller', () => {
  const ALL = ['cmp_demo_acme_oe', 'cmp_demo_acme_reminder', 'cmp_demo_globex_oe'];
  const expected: Record<string, { ids: string[]; globex: number }> = {
    opAll: { ids: ALL, globex: 200 },
    opScoped: { ids: ALL.slice(0, 2), globex: 404 },
    clientAdmin: { ids: ALL.slice(0, 2), globex: 404 },
    boundKey: { ids: ALL.slice(0, 2), globex: 404 },
    unboundKey: { ids: ALL, globex: 200 },
    opAll2: { ids: ALL, globex: 200 }, // another key of unboundKey's owner
  };
  for (const t of TRANSPORTS) {
    for (const [who, e] of Object.entries(expected)) {
      it(`${t}: ${who}`, async () => {
        const res = await call(t, who as CallerName, 'campaigns.list', { pageSize: 200 });
        expect(res.status).toBe(200);
        expect(ids(res).filter((id) => ALL.includes(id)).sort()).toEqual([...e.ids].sort());
        expect((await call(t, who as CallerName, 'campaigns.list', { clientId: GLOBEX })).status).toBe(e.globex);
      });
    }
  }

  it('a campaign carries its audience size and no operation before a send', async () => {
    const res = await w.rest('opAll', 'campaigns.list', { clientId: ACME, status: 'draft' });
    const oe = res.body.items.find((c: { id: string }) => c.id === 'cmp_demo_acme_oe');
    expect(oe).toMatchObject({ audienceSize: 3, status: 'draft', operationId: null, channel: 'email', sentAt: null });
  });
});

describe('campaigns.propose_send', () => {
  it('is open world and not idempotent in tools/list', async () => {
    const res = await fetch(`${w.s.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.c.operatorKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const text = await res.text();
    const json = JSON.parse(text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data:'))!.slice(5));
    const tool = json.result.tools.find((x: { name: string }) => x.name === 'svc.campaigns.propose_send');
    expect(tool.annotations).toMatchObject({ openWorldHint: true, idempotentHint: false, destructiveHint: false });
  });

  it('nothing is written or sent by a dry run or by the proposal; approval makes the operation and queues the outbox', async () => {
    const dry = await w.rest('clientAdmin', 'campaigns.propose_send', { campaign_id: 'cmp_demo_acme_oe' }, { prefer: 'dry-run' });
    expect(dry.status).toBe(200);
    expect(dry.body.outcome).toBe('planned');
    const proposed = await w.rest('clientAdmin', 'campaigns.propose_send', { campaign_id: 'cmp_demo_acme_oe' });
    expect(proposed.status).toBe(202);
    expect(await sql(`select * from operations`)).toEqual([]);
    expect(await sql(`select * from outbound_messages`)).toEqual([]);
    expect((await sql<{ status: string }>(`select status from campaigns where id = 'cmp_demo_acme_oe'`))[0]!.status).toBe('draft');

    const decided = await w.approve(proposed.body.approval.id);
    expect(decided.body.result.status).toBe('approved');
    const campaign = decided.body.result.result;
    expect(campaign).toMatchObject({ id: 'cmp_demo_acme_oe', status: 'sending', operationId: expect.stringMatching(/^op_/), audienceSize: 3 });
    const [op] = await sql<Record<string, unknown>>(`select kind, status, requested_by_kind, requested_by_id, subject_id from operations where id = '${campaign.operationId}'`);
    expect(op).toEqual({ kind: 'campaign_send', status: 'running', requested_by_kind: 'client_admin', requested_by_id: w.c.clientAdminUserId, subject_id: 'cmp_demo_acme_oe' });
    const queued = await sql<{ recipient: string; status: string }>(`select recipient, status from outbound_messages where operation_id = '${campaign.operationId}' order by recipient`);
    expect(queued.map((m) => m.status)).toEqual(['queued', 'queued', 'queued']);
    // No SVC_SMTP_URL on this server: nothing leaves; the rows stay queued.
    await new Promise((r) => setTimeout(r, 200));
    expect((await sql(`select 1 from outbound_messages where status <> 'queued'`)).length).toBe(0);

    // Delivery through nodemailer (its JSON transport stands in for SMTP).
    const mails: string[] = [];
    const json = mailSender({ jsonTransport: true }, 'campaigns@svc.example');
    const recording: Sender = { channels: json.channels, send: async (m) => { mails.push(m.recipient); await json.send(m); } };
    const report = await deliverDue(w.s.database, recording, new Date(), campaignOutbox);
    expect(report).toEqual({ sent: 3, failed: 0, retried: 0 });
    expect(mails.sort()).toEqual(['employee1@acme.example', 'employee2@acme.example', 'employee3@acme.example']);
    const [after] = await sql<{ status: string; progress: number; result: unknown }>(`select status, progress, result from operations where id = '${campaign.operationId}'`);
    expect(after).toEqual({ status: 'succeeded', progress: 100, result: { sent: 3, failed: 0 } });
    const listed = await w.rest('clientAdmin', 'campaigns.list', { status: 'sent' });
    expect(listed.body.items.map((c: { id: string }) => c.id)).toEqual(['cmp_demo_acme_oe']);
    expect(listed.body.items[0].sentAt).not.toBeNull();
    // Another pass sends nothing again.
    expect(await deliverDue(w.s.database, recording, new Date(), campaignOutbox)).toEqual({ sent: 0, failed: 0, retried: 0 });
  });

  it('a future scheduledAt schedules it; its messages leave once due', async () => {
    await addCampaign('cmp_sched', ACME);
    const at = new Date(Date.now() + 3600_000).toISOString();
    const proposed = await w.mcp('boundKey', 'campaigns.propose_send', { campaign_id: 'cmp_sched', scheduledAt: at });
    expect(proposed.status).toBe(202);
    const campaign = (await w.approve(proposed.body.approval.id)).body.result.result;
    expect(campaign).toMatchObject({ status: 'scheduled', scheduledAt: at });
    expect((await sql<{ status: string }>(`select status from operations where id = '${campaign.operationId}'`))[0]!.status).toBe('queued');
    expect(await deliverDue(w.s.database, testSender, new Date(), campaignOutbox)).toEqual({ sent: 0, failed: 0, retried: 0 });
    expect((await sql<{ status: string }>(`select status from operations where id = '${campaign.operationId}'`))[0]!.status).toBe('queued');
    // Due, with a sender for another channel only: the campaign moves to sending and its operation runs.
    await deliverDue(w.s.database, { channels: ['sms'], send: async () => undefined }, new Date(Date.now() + 2 * 3600_000), campaignOutbox);
    expect((await sql<{ status: string }>(`select status from campaigns where id = 'cmp_sched'`))[0]!.status).toBe('sending');
    expect((await sql<{ status: string }>(`select status from operations where id = '${campaign.operationId}'`))[0]!.status).toBe('running');
    const later = new Date(Date.now() + 2 * 3600_000);
    expect((await deliverDue(w.s.database, testSender, later, campaignOutbox)).sent).toBe(2);
    expect((await sql<{ status: string }>(`select status from campaigns where id = 'cmp_sched'`))[0]!.status).toBe('sent');
    expect((await sql<{ status: string }>(`select status from operations where id = '${campaign.operationId}'`))[0]!.status).toBe('succeeded');
  });

  it('failures are retried, then failed; sms waits for a sender that handles it; the loop runs passes', async () => {
    await addCampaign('cmp_fail', ACME, 'draft', 'email', 1);
    await addCampaign('cmp_sms', ACME, 'draft', 'sms', 1);
    for (const id of ['cmp_fail', 'cmp_sms']) {
      const p = await w.rest('unboundKey', 'campaigns.propose_send', { campaign_id: id });
      await w.approve(p.body.approval.id);
    }
    const failing: Sender = { channels: ['email'], send: async () => { throw new Error('mailbox unavailable'); } };
    for (let i = 0; i < 4; i++) expect((await deliverDue(w.s.database, failing, new Date(), campaignOutbox)).retried).toBe(1);
    expect(await deliverDue(w.s.database, failing, new Date(), campaignOutbox)).toEqual({ sent: 0, failed: 1, retried: 0 });
    const [failed] = await sql<{ status: string; attempts: number; last_error: string }>(`select status, attempts, last_error from outbound_messages m join campaign_messages c on c.message_id = m.id where c.campaign_id = 'cmp_fail'`);
    expect(failed).toEqual({ status: 'failed', attempts: 5, last_error: 'mailbox unavailable' });
    expect((await sql<{ status: string }>(`select status from campaigns where id = 'cmp_fail'`))[0]!.status).toBe('sent');
    expect((await sql<{ status: string }>(`select status from outbound_messages m join campaign_messages c on c.message_id = m.id where c.campaign_id = 'cmp_sms'`))[0]!.status).toBe('queued');
    const loop = startDeliveryLoop(w.s.database, { channels: ['sms'], send: async () => undefined }, { intervalMs: 50, hooks: campaignOutbox });
    await new Promise((r) => setTimeout(r, 300));
    await loop.stop();
    expect((await sql<{ status: string }>(`select status from campaigns where id = 'cmp_sms'`))[0]!.status).toBe('sent');
  });

  it('only a draft can be sent: every other status is invalid_transition, on both transports, and files nothing', async () => {
    for (const status of ['scheduled', 'sending', 'sent', 'cancelled']) {
      await addCampaign(`cmp_${status}`, ACME, status);
      for (const t of TRANSPORTS) {
        const res = await call(t, 'unboundKey', 'campaigns.propose_send', { campaign_id: `cmp_${status}` });
        expect(res.status, status).toBe(409);
        expect(res.body.code).toBe('invalid_transition');
      }
    }
    expect(await sql(`select 1 from approvals where operation_id = 'campaigns.propose_send' and subject_id like 'cmp_s%' and subject_id <> 'cmp_sched' and subject_id <> 'cmp_sms'`)).toEqual([]);
  });

  it('a client admin proposes for its own client only; outside the reach is 404', async () => {
    for (const t of TRANSPORTS) {
      expect((await call(t, 'clientAdmin', 'campaigns.propose_send', { campaign_id: 'cmp_demo_globex_oe' })).status).toBe(404);
      expect((await call(t, 'boundKey', 'campaigns.propose_send', { campaign_id: 'cmp_demo_globex_oe' })).status).toBe(404);
      expect((await call(t, 'opScoped', 'campaigns.propose_send', { campaign_id: 'cmp_demo_globex_oe' })).status).toBe(404);
      expect((await call(t, 'opAll', 'campaigns.propose_send', { campaign_id: 'cmp_nobody' })).status).toBe(404);
    }
    const own = await w.rest('clientAdmin', 'campaigns.propose_send', { campaign_id: 'cmp_demo_acme_reminder' });
    expect(own.status).toBe(202);
    // The Acme proposal belongs to Acme: the Acme-scoped operator sees it.
    expect((await w.rest('opScoped', 'approvals.get', { approval_id: own.body.approval.id })).status).toBe(200);
  });
});
