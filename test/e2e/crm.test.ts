// crm.* end to end over REST (openapi-fetch) and MCP (SDK Client), on PGlite and on PostgreSQL when
// DATABASE_URL is set: the visibility matrix (rule 3: operators in person read every row, platform
// rows included, whatever their client scope; client admins and API keys keep their scope), the
// clientId filter rule, redaction of contacts without pii:read, contacts:search rules, writes that
// keep the client scope, touchpoint rules, and the opportunity state machine (convert, Tier 2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEEDED_PERSONAL_DATA } from '../../demo/seed.ts';
import { startServerWithIdp, type Answer, type CallerName, type World } from '../support/world.ts';

let w: World;
const ACME = 'cli_demo_acme';
const GLOBEX = 'cli_demo_globex';
const TRANSPORTS = ['rest', 'mcp'] as const;
type Transport = (typeof TRANSPORTS)[number];
const NO_PII: CallerName[] = ['clientAdmin', 'opAllNoPii', 'boundKeyNoPii', 'unboundKeyNoPii'];
/** Everything a caller without pii:read received in this file (checked for personal data at the end). */
const seenWithoutPii: { what: string; body: unknown }[] = [];

beforeAll(async () => {
  w = await startServerWithIdp();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

async function call(t: Transport, who: CallerName, op: string, input: Record<string, unknown> = {}): Promise<Answer> {
  const res = t === 'rest' ? await w.rest(who, op, input) : await w.mcp(who, op, input);
  if (NO_PII.includes(who)) seenWithoutPii.push({ what: `${t} ${who} ${op} ${JSON.stringify(input)}`, body: res.body });
  return res;
}

async function sql<T = Record<string, unknown>>(q: string): Promise<T[]> {
  return w.s.database.execute(q) as Promise<T[]>;
}

const ids = (res: Answer) => (res.body.items as { id: string }[]).map((r) => r.id);

// Seeded rows by owner: Acme, Globex and the platform (client null).
const ROWS = {
  'crm.leads.list': {
    acme: ['led_demo_acme_new', 'led_demo_acme_contacted', 'led_demo_acme_qualified', 'led_demo_acme_disqualified', 'led_demo_acme_converted'],
    globex: ['led_demo_globex_new'],
    platform: ['led_demo_platform_new'],
  },
  'crm.accounts.list': {
    acme: ['acc_demo_acme_brokers', 'acc_demo_acme_plants'],
    globex: ['acc_demo_globex_clinics'],
    platform: ['acc_demo_platform_umbrella', 'acc_demo_platform_hooli'],
  },
  'crm.contacts.list': {
    acme: ['con_demo_acme_priya', 'con_demo_acme_marco'],
    globex: ['con_demo_globex_lena'],
    platform: ['con_demo_platform_tom', 'con_demo_platform_ada'],
  },
  'crm.contacts.search': {
    acme: ['con_demo_acme_priya', 'con_demo_acme_marco'],
    globex: ['con_demo_globex_lena'],
    platform: ['con_demo_platform_tom', 'con_demo_platform_ada'],
  },
  'crm.opportunities.list': {
    acme: ['opp_demo_acme_retiree', 'opp_demo_acme_fleet'],
    globex: ['opp_demo_globex_clinics'],
    platform: ['opp_demo_platform_umbrella'],
  },
} as const;

type Reach = { acme: boolean; globex: boolean; platform: boolean; globexFilter: 200 | 404; redacted: boolean };
const MATRIX: Record<string, Reach> = {
  opAll: { acme: true, globex: true, platform: true, globexFilter: 200, redacted: false },
  opScoped: { acme: true, globex: true, platform: true, globexFilter: 200, redacted: false },
  clientAdmin: { acme: true, globex: false, platform: false, globexFilter: 404, redacted: true },
  boundKey: { acme: true, globex: false, platform: false, globexFilter: 404, redacted: false },
  unboundKey: { acme: true, globex: true, platform: false, globexFilter: 200, redacted: false },
  // A second key of the same owner as unboundKey: the same answers (nothing rides on the user alone).
  opAll2: { acme: true, globex: true, platform: false, globexFilter: 200, redacted: false },
  opAllNoPii: { acme: true, globex: true, platform: true, globexFilter: 200, redacted: true },
  boundKeyNoPii: { acme: true, globex: false, platform: false, globexFilter: 404, redacted: true },
};

describe('CRM reads: who sees which rows (visibility rule 3) and whose contacts are redacted', () => {
  for (const t of TRANSPORTS) {
    for (const [who, reach] of Object.entries(MATRIX)) {
      it(`${t}: ${who}`, async () => {
        for (const [op, rows] of Object.entries(ROWS)) {
          const res = await call(t, who as CallerName, op, { pageSize: 200 });
          expect(res.status, op).toBe(200);
          const got = ids(res);
          for (const part of ['acme', 'globex', 'platform'] as const) {
            for (const id of rows[part]) expect(got.includes(id), `${op} ${id}`).toBe(reach[part]);
          }
          const filtered = await call(t, who as CallerName, op, { clientId: GLOBEX });
          expect(filtered.status, `${op} clientId=Globex`).toBe(reach.globexFilter);
          if (filtered.status === 200) expect(ids(filtered)).toEqual(rows.globex.filter(() => true).slice().sort((a, b) => (got.indexOf(a) - got.indexOf(b))));
          else expect(filtered.body.code).toBe('not_found');
          if (op.startsWith('crm.contacts')) {
            for (const c of res.body.items) {
              expect(c.redacted, `${op} ${c.id}`).toBe(reach.redacted);
              if (reach.redacted) expect([c.name, c.email, c.phone]).toEqual([null, null, null]);
              else expect(c.name).toEqual(expect.any(String));
              expect(c.jobTitle).toEqual(expect.any(String));
            }
          }
        }
      });
    }
  }

  it('leads and contacts are newest first, accounts by name; filters narrow', async () => {
    const leads = await w.rest('opAll', 'crm.leads.list', { pageSize: 200 });
    const created = (leads.body.items as { createdAt: string }[]).map((l) => l.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
    const accounts = await w.rest('opAll', 'crm.accounts.list', { pageSize: 200 });
    const names = (accounts.body.items as { name: string }[]).map((a) => a.name);
    expect(names).toEqual([...names].sort());
    const page1 = await w.rest('opAll', 'crm.accounts.list', { pageSize: 2 });
    const page2 = await w.rest('opAll', 'crm.accounts.list', { pageSize: 2, cursor: page1.body.nextCursor });
    expect([...ids(page1), ...ids(page2)]).toEqual(ids(accounts).slice(0, 4));
    expect(ids(await w.rest('opAll', 'crm.leads.list', { status: 'new' })).sort()).toEqual(['led_demo_acme_new', 'led_demo_globex_new', 'led_demo_platform_new']);
    expect(ids(await w.rest('opAll', 'crm.opportunities.list', { stage: 'lost' }))).toEqual(['opp_demo_acme_fleet']);
    expect(ids(await w.rest('opAll', 'crm.contacts.list', { accountId: 'acc_demo_acme_plants' }))).toEqual(['con_demo_acme_marco']);
    expect(ids(await w.rest('opAll', 'crm.accounts.list', { status: 'former_customer' }))).toEqual(['acc_demo_platform_hooli']);
  });
});

describe('crm.contacts.search', () => {
  it('with pii:read: exact e-mail (any case), exact phone (digits compared) and free text over personal fields', async () => {
    for (const t of TRANSPORTS) {
      expect(ids(await call(t, 'opAll', 'crm.contacts.search', { email: 'priya.natarajan@BROKERS.acme.example' }))).toEqual(['con_demo_acme_priya']);
      expect(ids(await call(t, 'opAll', 'crm.contacts.search', { phone: '+1-415-555-0142' }))).toEqual(['con_demo_acme_priya']);
      expect(ids(await call(t, 'opAll', 'crm.contacts.search', { query: 'hoffmann' }))).toEqual(['con_demo_globex_lena']);
      expect(ids(await call(t, 'opScoped', 'crm.contacts.search', { query: 'hoffmann' }))).toEqual(['con_demo_globex_lena']);
      expect(ids(await call(t, 'boundKey', 'crm.contacts.search', { query: 'hoffmann' }))).toEqual([]);
    }
  });

  it('without pii:read: e-mail and phone criteria are 403 insufficient_scope, and free text matches the job title only', async () => {
    for (const t of TRANSPORTS) {
      for (const who of NO_PII) {
        for (const criteria of [{ email: 'lena.hoffmann@clinics.globex.example' }, { phone: '4930555012 34' }, { email: 'nobody@example.com' }]) {
          const res = await call(t, who, 'crm.contacts.search', criteria);
          expect(res.status, `${who} ${JSON.stringify(criteria)}`).toBe(403);
          expect(res.body.code).toBe('insufficient_scope');
        }
        // A person's name finds nothing, exactly as a name nobody has.
        const byName = await call(t, who, 'crm.contacts.search', { query: 'Priya' });
        const byNobody = await call(t, who, 'crm.contacts.search', { query: 'Zzyzx' });
        expect(byName.status).toBe(200);
        expect(ids(byName)).toEqual([]);
        expect(ids(byNobody)).toEqual([]);
        expect(ids(await call(t, who, 'crm.contacts.search', { query: 'natarajan@' }))).toEqual([]);
        const byTitle = await call(t, who, 'crm.contacts.search', { query: 'benefits director' });
        expect(ids(byTitle)).toContain('con_demo_acme_priya');
        for (const c of byTitle.body.items) expect(c).toMatchObject({ redacted: true, name: null, email: null, phone: null });
      }
    }
  });

  it('the clientId rule holds for search; LIKE wildcards are literal', async () => {
    expect((await w.rest('boundKey', 'crm.contacts.search', { clientId: GLOBEX })).status).toBe(404);
    expect(ids(await w.rest('opScoped', 'crm.contacts.search', { clientId: GLOBEX }))).toEqual(['con_demo_globex_lena']);
    expect(ids(await w.rest('opAll', 'crm.contacts.search', { query: '%' }))).toEqual([]);
    expect((await w.rest('opAll', 'crm.contacts.search', { phone: '++' })).status).toBe(422);
  });
});

describe('CRM writes keep the client scope', () => {
  const lead = (extra: Record<string, unknown> = {}) => ({ title: 'Wellness add-on', company: 'Acme Plant Services', ...extra });

  it('crm.lead.create: who may create which lead', async () => {
    const cases: [CallerName, Record<string, unknown>, number][] = [
      ['opAll', lead({ clientId: GLOBEX }), 201],
      ['opAll', lead(), 201], // a platform lead
      ['unboundKey', lead(), 201],
      ['opScoped', lead({ clientId: ACME }), 201],
      ['opScoped', lead({ clientId: GLOBEX }), 404], // reads Globex, cannot write there
      ['opScoped', lead(), 422], // platform leads: operators over every client only
      ['boundKey', lead({ clientId: ACME }), 201],
      ['boundKey', lead({ clientId: GLOBEX }), 404],
      ['boundKey', lead(), 422],
      ['clientAdmin', lead({ clientId: ACME }), 404], // not in the audience
      ['opAll', lead({ clientId: ACME, accountId: 'acc_demo_globex_clinics' }), 422],
      ['opScoped', lead({ clientId: ACME, accountId: 'acc_demo_globex_clinics' }), 404],
      ['opAll', lead({ clientId: ACME, contactId: 'con_demo_acme_priya', accountId: 'acc_demo_acme_brokers', estimatedValue: 1200, currency: 'EUR' }), 201],
      ['opAll', lead({ clientId: 'cli_nobody' }), 404],
      ['opAll', lead({ clientId: ACME, ownerId: 'usr_nobody' }), 422],
    ];
    for (const t of TRANSPORTS) {
      for (const [who, input, status] of cases) {
        const res = await call(t, who, 'crm.lead.create', input);
        expect(res.status, `${t} ${who} ${JSON.stringify(input)} ${JSON.stringify(res.body)}`).toBe(status);
        if (status === 201) {
          expect(res.body.outcome).toBe('ran');
          expect(res.body.result).toMatchObject({ status: 'new', clientId: input.clientId ?? null, title: 'Wellness add-on', currency: input.currency ?? 'USD' });
        }
        if (status === 422) expect(res.body.code).toBe('validation_failed');
      }
    }
  });

  it('crm.touchpoint.log: links of one client, write reach, and a new lead becomes contacted', async () => {
    const tp = (extra: Record<string, unknown>) => ({ channel: 'call', summary: 'Called about renewal', ...extra });
    expect((await w.rest('opScoped', 'crm.touchpoint.log', tp({ leadId: 'led_demo_globex_new' }))).status).toBe(404);
    expect((await w.rest('opScoped', 'crm.touchpoint.log', tp({ leadId: 'led_demo_platform_new' }))).status).toBe(404);
    expect((await w.rest('boundKey', 'crm.touchpoint.log', tp({ contactId: 'con_demo_globex_lena' }))).status).toBe(404);
    const none = await w.rest('opAll', 'crm.touchpoint.log', tp({}));
    expect(none.status).toBe(422);
    expect(none.body.errors[0].pointer).toBe('/leadId');
    const mixed = await w.rest('opAll', 'crm.touchpoint.log', tp({ leadId: 'led_demo_acme_new', contactId: 'con_demo_globex_lena' }));
    expect(mixed.status).toBe(422);
    expect(mixed.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/contactId']);
    expect((await w.rest('opAll', 'crm.touchpoint.log', tp({ leadId: 'led_nobody' }))).status).toBe(404);

    const logged = await w.mcp('opScoped', 'crm.touchpoint.log', tp({ leadId: 'led_demo_acme_new', contactId: 'con_demo_acme_priya', direction: 'inbound' }));
    expect(logged.status).toBe(201);
    expect(logged.body.result).toMatchObject({ clientId: ACME, leadId: 'led_demo_acme_new', contactId: 'con_demo_acme_priya', direction: 'inbound', loggedBy: { kind: 'operator', id: w.c.scopedOperatorUserId } });
    const [leadRow] = await sql<{ status: string }>(`select status from leads where id = 'led_demo_acme_new'`);
    expect(leadRow!.status).toBe('contacted');
    // Only new moves: a qualified lead stays qualified.
    expect((await w.rest('boundKey', 'crm.touchpoint.log', tp({ leadId: 'led_demo_acme_qualified', occurredAt: '2026-01-02T10:00:00Z' }))).status).toBe(201);
    const [q] = await sql<{ status: string }>(`select status from leads where id = 'led_demo_acme_qualified'`);
    expect(q!.status).toBe('qualified');
    // Platform rows by an operator over every client.
    const platform = await w.rest('opAll', 'crm.touchpoint.log', tp({ leadId: 'led_demo_platform_new', accountId: 'acc_demo_platform_umbrella' }));
    expect(platform.status).toBe(201);
    expect(platform.body.result.clientId).toBeNull();
  });
});

describe('crm.opportunity.convert (Tier 2): the state machine', () => {
  async function propose(who: CallerName, id: string, extra: Record<string, unknown> = {}): Promise<Answer> {
    return w.rest(who, 'crm.opportunity.convert', { opportunity_id: id, ...extra });
  }

  it('an open opportunity converts once approved: won, a project in discovery for its client; a second conversion is invalid_transition', async () => {
    const proposed = await propose('unboundKey', 'opp_demo_acme_retiree', { projectName: 'Retiree benefits rollout', targetDate: '2027-03-01' });
    expect(proposed.status).toBe(202);
    const decided = await w.approve(proposed.body.approval.id);
    expect(decided.body.result.status).toBe('approved');
    const out = decided.body.result.result;
    expect(out.opportunity).toMatchObject({ id: 'opp_demo_acme_retiree', stage: 'won', clientId: ACME, convertedProjectId: out.project.id });
    expect(out.opportunity.convertedAt).not.toBeNull();
    expect(out.client).toMatchObject({ id: ACME, status: 'active' });
    expect(out.project).toMatchObject({ clientId: ACME, stage: 'discovery', status: 'active', name: 'Retiree benefits rollout', targetDate: '2027-03-01' });
    for (const t of TRANSPORTS) {
      const again = t === 'rest' ? await propose('unboundKey', 'opp_demo_acme_retiree') : await w.mcp('unboundKey', 'crm.opportunity.convert', { opportunity_id: 'opp_demo_acme_retiree' });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('invalid_transition');
    }
  });

  it('lost is invalid_transition; won but not converted converts; outside the write reach is 404', async () => {
    expect((await propose('unboundKey', 'opp_demo_acme_fleet')).body.code).toBe('invalid_transition');
    await sql(`insert into opportunities (id, client_id, name, stage, currency) values ('opp_won_open', '${GLOBEX}', 'Won deal', 'won', 'USD')`);
    const proposed = await propose('opAll2', 'opp_won_open');
    expect(proposed.status).toBe(202);
    const decided = await w.approve(proposed.body.approval.id);
    expect(decided.body.result.result.opportunity).toMatchObject({ stage: 'won', clientId: GLOBEX });
    expect((await propose('boundKey', 'opp_demo_globex_clinics')).status).toBe(404);
    expect((await propose('opScoped', 'opp_demo_globex_clinics')).status).toBe(404);
    expect((await propose('opScoped', 'opp_demo_platform_umbrella')).status).toBe(404);
    expect((await propose('clientAdmin', 'opp_demo_acme_fleet')).status).toBe(404);
    expect((await propose('opAll', 'opp_nobody')).status).toBe(404);
    // Each stage before won converts; the mcp pre-flight refuses an impossible date.
    expect((await w.mcp('opAll', 'crm.opportunity.convert', { opportunity_id: 'opp_demo_globex_clinics', targetDate: '2027-02-30' })).body.code).toBe('validation_failed');
  });

  it('a platform opportunity creates a client in onboarding, only for an operator over every client', async () => {
    const proposed = await propose('unboundKey', 'opp_demo_platform_umbrella');
    expect(proposed.status).toBe(202);
    const decided = await w.approve(proposed.body.approval.id);
    const out = decided.body.result.result;
    expect(out.client).toMatchObject({ name: 'Umbrella Logistics', status: 'onboarding', industry: 'Logistics' });
    expect(out.opportunity).toMatchObject({ stage: 'won', clientId: out.client.id });
    expect(out.project).toMatchObject({ clientId: out.client.id, stage: 'discovery', name: 'Umbrella Logistics onboarding' });
    expect((await w.rest('opAll', 'clients.get', { client_id: out.client.id })).status).toBe(200);
  });

  it('every open stage converts (qualification, proposal, negotiation)', async () => {
    for (const stage of ['qualification', 'proposal', 'negotiation']) {
      await sql(`insert into opportunities (id, client_id, name, stage, currency) values ('opp_stage_${stage}', '${ACME}', '${stage}', '${stage}', 'USD')`);
      const proposed = await propose('boundKey', `opp_stage_${stage}`);
      expect(proposed.status).toBe(202);
      expect((await w.approve(proposed.body.approval.id)).body.result.result.opportunity.stage).toBe('won');
    }
  });
});

describe('personal data', () => {
  it('no response to a caller without pii:read, no event and no log line holds a seeded name, e-mail or phone', async () => {
    // Every CRM read, both transports, every caller without pii:read (on top of what the tests above recorded).
    for (const t of TRANSPORTS) {
      for (const who of NO_PII) {
        for (const op of Object.keys(ROWS)) await call(t, who, op, { pageSize: 200 });
        await call(t, who, 'crm.contacts.search', { query: 'a' });
        await call(t, who, 'crm.touchpoint.log', { contactId: 'con_demo_acme_priya', channel: 'note', summary: 'Noted' });
        await call(t, who, 'approvals.list', { pageSize: 200 });
      }
    }
    expect(seenWithoutPii.length).toBeGreaterThan(100);
    const needles = SEEDED_PERSONAL_DATA.flatMap((v) => [v, v.toLowerCase()]);
    for (const seen of seenWithoutPii) {
      const text = JSON.stringify(seen.body);
      for (const needle of needles) expect(text.includes(needle), `${seen.what} leaks ${needle}`).toBe(false);
    }
    const events = JSON.stringify(await sql(`select data from events`));
    for (const needle of needles) expect(events.includes(needle), `events leak ${needle}`).toBe(false);
    const logs = w.s.logs.join('\n');
    for (const needle of needles) expect(logs.includes(needle), `logs leak ${needle}`).toBe(false);
  });
});
