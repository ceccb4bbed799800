// search.query end to end over REST (openapi-fetch) and MCP (SDK Client), on PGlite and on PostgreSQL
// when DATABASE_URL is set: who finds which rows (every principal kind, Acme and Globex rows,
// internal tasks and files, platform CRM rows), the clientId filter, personal data without pii:read
// (neither matched nor shown), scores in [0, 1] best first, prefix matching, and cursor paging.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { files, uploads } from '../../runtime/data/schema.ts';
import { accounts, campaigns, contacts, intakeRecords, leads, opportunities, projects, reviews, tasks } from '../../handlers/data/schema.ts';
import { SEEDED_CONTACTS, SEEDED_PERSONAL_DATA } from '../../demo/seed.ts';
import { startServerWithIdp, type Answer, type CallerName, type World } from '../support/world.ts';

let w: World;
const ACME = 'cli_demo_acme';
const GLOBEX = 'cli_demo_globex';
const TRANSPORTS = ['rest', 'mcp'] as const;
type Transport = (typeof TRANSPORTS)[number];
const NO_PII: CallerName[] = ['clientAdmin', 'opAllNoPii', 'boundKeyNoPii', 'unboundKeyNoPii'];
const seenWithoutPii: { what: string; body: unknown }[] = [];

/** A word found nowhere in the demo seed: every row below carries it. */
const MARK = 'zephyrquill';

type Owner = 'acme' | 'globex' | 'none';
interface Row {
  type: string;
  id: string;
  owner: Owner;
  /** A review a client admin must not find (not released). */
  unreleased?: boolean;
}
const ROWS: Row[] = [];
/**
 * The answer to "benefits" for opAll over the demo seed and the rows above, recorded once: the test
 * asserts it on whichever driver runs, so PGlite and PostgreSQL give the same ids, order, scores
 * (titles 0.5 = rank 1 / (1 + 1)), titles and snippets.
 */
const GOLDEN: unknown[] = [
  ["project", "prj_demo_acme_portal", 0.52381, "Benefits portal", "Benefits portal engagement."],
  ["client", "cli_demo_acme", 0.5, "Acme Benefits Co", "Acme Benefits Co"],
  ["lead", "led_demo_acme_qualified", 0.5, "Retiree benefits", "Retiree benefits"],
  ["lead", "led_demo_globex_new", 0.5, "Clinic staff benefits", "Clinic staff benefits"],
  ["lead", "led_demo_platform_new", 0.5, "2027 benefits renewal", "2027 benefits renewal"],
  ["opportunity", "opp_demo_acme_retiree", 0.5, "Retiree benefits", "Retiree benefits"],
  ["opportunity", "opp_demo_globex_clinics", 0.5, "Clinic staff benefits", "Clinic staff benefits"],
  ["contact", "con_demo_acme_priya", 0.166667, "Priya Natarajan", "Priya.Natarajan@brokers.acme.example +1 (415) 555-0142 Benefits Director"],
  ["contact", "con_demo_globex_lena", 0.166667, "Lena Hoffmann", "lena.hoffmann@clinics.globex.example +49 30 5550 1234 Benefits Director"],
  ["intake_record", "int_search_acme", 0.090909, "zephyrquill intake", "benefits_census"],
  ["intake_record", "int_search_globex", 0.090909, "zephyrquill intake", "benefits_census"],
];
const CRM = new Set(['lead', 'account', 'contact', 'opportunity']);

async function seedMarkedRows(): Promise<void> {
  const db = w.s.database.db;
  const clientOf = (o: Owner) => (o === 'acme' ? ACME : o === 'globex' ? GLOBEX : null);
  for (const owner of ['acme', 'globex', 'none'] as const) {
    const clientId = clientOf(owner);
    const id = (p: string) => `${p}_search_${owner}`;
    const add = (type: string, rowId: string, extra: Partial<Row> = {}) => ROWS.push({ type, id: rowId, owner, ...extra });
    await db.insert(tasks).values({ id: id('tsk'), clientId, title: `${MARK} task ${owner}`, description: 'Prepare the quarterly filing', status: 'open', priority: 'normal', createdBy: w.c.operatorUserId });
    add('task', id('tsk'));
    await db.insert(uploads).values({
      id: id('upl'),
      clientId,
      name: `${MARK}-${owner}.pdf`,
      contentType: 'application/pdf',
      maxBytes: 10,
      status: 'registered',
      storageKey: id('key'),
      requestedByKind: 'operator',
      requestedById: w.c.operatorUserId,
      requestedByCredentialId: 'key_search',
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    await db.insert(files).values({
      id: id('fil'),
      uploadId: id('upl'),
      clientId,
      name: `${MARK}-${owner}.pdf`,
      contentType: 'application/pdf',
      sizeBytes: 10,
      sha256: '0'.repeat(64),
      purpose: 'deliverable',
      status: 'available',
      storageKey: id('key'),
      uploadedByKind: 'operator',
      uploadedById: w.c.operatorUserId,
    });
    add('file', id('fil'));
    await db.insert(leads).values({ id: id('led'), clientId, title: `${MARK} lead`, company: 'Northwind', source: 'referral', status: 'new', currency: 'USD' });
    add('lead', id('led'));
    await db.insert(accounts).values({ id: id('acc'), clientId, name: `${MARK} account`, status: 'prospect' });
    add('account', id('acc'));
    await db.insert(contacts).values({ id: id('con'), clientId, name: `Quentin ${owner}`, email: `quentin.${owner}@example.org`, jobTitle: `${MARK} coordinator` });
    add('contact', id('con'));
    await db.insert(opportunities).values({ id: id('opp'), clientId, name: `${MARK} opportunity`, stage: 'qualification', currency: 'USD' });
    add('opportunity', id('opp'));
    if (clientId === null) continue;
    await db.insert(projects).values({ id: id('prj'), clientId, name: `${MARK} project`, stage: 'discovery', status: 'active' });
    add('project', id('prj'));
    await db.insert(reviews).values({ id: id('rev'), clientId, title: `${MARK} released review`, kind: 'report', status: 'released' });
    add('review', id('rev'));
    await db.insert(reviews).values({ id: id('rvd'), clientId, title: `${MARK} draft review`, kind: 'report', status: 'draft' });
    add('review', id('rvd'), { unreleased: true });
    await db.insert(intakeRecords).values({ id: id('int'), clientId, title: `${MARK} intake`, template: 'benefits_census', status: 'draft', fields: [], createdByKind: 'operator', createdById: w.c.operatorUserId });
    add('intake_record', id('int'));
    await db.insert(campaigns).values({ id: id('cmp'), clientId, name: `${MARK} campaign`, kind: 'reminder', channel: 'email', status: 'draft' });
    add('campaign', id('cmp'));
  }
}

beforeAll(async () => {
  w = await startServerWithIdp();
  await seedMarkedRows();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

async function search(t: Transport, who: CallerName, input: Record<string, unknown>): Promise<Answer> {
  const res = t === 'rest' ? await w.rest(who, 'search.query', input) : await w.mcp(who, 'search.query', input);
  if (NO_PII.includes(who)) seenWithoutPii.push({ what: `${t} ${who} ${JSON.stringify(input)}`, body: res.body });
  return res;
}

/** Every hit of a query, following cursors. */
async function all(t: Transport, who: CallerName, input: Record<string, unknown>): Promise<{ type: string; id: string; clientId: string | null; score: number; title: string; snippet: string }[]> {
  const out = [];
  let cursor: string | undefined;
  do {
    const res = await search(t, who, { ...input, pageSize: 7, ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...res.body.items);
    cursor = res.body.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

// Who reaches what: Acme and Globex rows, rows without a client (internal tasks and files, platform CRM).
interface Reach {
  globex: boolean;
  /** Visibility rules 1 and 3: a person signed in as an operator. */
  widened: boolean;
  clientAdmin: boolean;
  globexFilter: 200 | 404;
}
const MATRIX: Record<string, Reach> = {
  opAll: { globex: true, widened: true, clientAdmin: false, globexFilter: 200 },
  opScoped: { globex: false, widened: true, clientAdmin: false, globexFilter: 200 },
  clientAdmin: { globex: false, widened: false, clientAdmin: true, globexFilter: 404 },
  boundKey: { globex: false, widened: false, clientAdmin: false, globexFilter: 404 },
  unboundKey: { globex: true, widened: false, clientAdmin: false, globexFilter: 200 },
  opAllNoPii: { globex: true, widened: true, clientAdmin: false, globexFilter: 200 },
  boundKeyNoPii: { globex: false, widened: false, clientAdmin: false, globexFilter: 404 },
};

function expected(reach: Reach, row: Row): boolean {
  if (row.unreleased && reach.clientAdmin) return false;
  if (row.owner === 'acme') return true;
  if (row.owner === 'globex') return reach.globex || (reach.widened && CRM.has(row.type));
  return reach.widened; // internal task or file (rule 1), platform CRM row (rule 3)
}

describe('search.query: who finds which rows', () => {
  for (const t of TRANSPORTS) {
    for (const [who, reach] of Object.entries(MATRIX)) {
      it(`${t}: ${who}`, async () => {
        const hits = await all(t, who as CallerName, { query: MARK });
        const got = hits.map((h) => h.id);
        expect(new Set(got).size, 'no hit twice across pages').toBe(got.length);
        for (const row of ROWS) expect(got.includes(row.id), `${row.type} ${row.id}`).toBe(expected(reach, row));
        expect(got.filter((id) => id.includes('_search_')).length).toBe(got.length);
        for (const h of hits) {
          const row = ROWS.find((r) => r.id === h.id)!;
          expect(h.type).toBe(row.type);
          expect(h.clientId).toBe(row.owner === 'acme' ? ACME : row.owner === 'globex' ? GLOBEX : null);
          expect(h.score).toBeGreaterThanOrEqual(0);
          expect(h.score).toBeLessThanOrEqual(1);
        }
        const scores = hits.map((h) => h.score);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));

        // Clients themselves: each in reach by the client scope (rule 5, never widened).
        const clientHits = (await all(t, who as CallerName, { query: 'globex', types: ['client'] })).map((h) => h.id);
        expect(clientHits).toEqual(reach.globex ? [GLOBEX] : []);

        // The clientId filter: Globex is outside the scope of Acme-bound callers, but a widened operator reads Globex's CRM rows.
        const filtered = await search(t, who as CallerName, { query: MARK, clientId: GLOBEX, pageSize: 200 });
        expect(filtered.status).toBe(reach.globexFilter);
        if (filtered.status === 200) {
          const want = ROWS.filter((r) => r.owner === 'globex' && expected(reach, r)).map((r) => r.id).sort();
          expect((filtered.body.items as { id: string }[]).map((h) => h.id).sort()).toEqual(want);
        } else {
          expect(filtered.body.code).toBe('not_found');
        }
      });
    }
  }

  it('types narrows the kinds searched; the internal seeded task is found by operators in person only', async () => {
    for (const t of TRANSPORTS) {
      const onlyTasks = await all(t, 'opAll', { query: MARK, types: ['task', 'file'] });
      expect(new Set(onlyTasks.map((h) => h.type))).toEqual(new Set(['task', 'file']));
      const runbook = { query: 'onboarding runbook' };
      expect((await all(t, 'opScoped', runbook)).map((h) => h.id)).toContain('tsk_demo_internal_runbook');
      for (const who of ['clientAdmin', 'boundKey', 'unboundKey'] as const) {
        expect((await all(t, who, runbook)).map((h) => h.id)).not.toContain('tsk_demo_internal_runbook');
      }
    }
  });
});

describe('search.query: matching and scores', () => {
  it('prefixes match (every word required), the title weighs more, and scores are in [0, 1] best first', async () => {
    const hits = await all('rest', 'opAll', { query: 'onboard runb' });
    expect(hits.map((h) => h.id)).toEqual(['tsk_demo_internal_runbook']);
    expect(hits[0]!.title).toBe('Update the onboarding runbook');
    expect(hits[0]!.snippet).toContain('onboarding runbook');
    // "filing" is in the marked tasks' descriptions (weight D) and nowhere in a title: lower than a title match.
    const inTitle = await all('rest', 'opAll', { query: `${MARK} task` });
    const inBody = await all('rest', 'opAll', { query: `${MARK} filing` });
    expect(inBody.length).toBeGreaterThan(0);
    expect(inTitle[0]!.score).toBeGreaterThan(inBody[0]!.score);
    for (const h of [...inTitle, ...inBody]) expect(h.score > 0 && h.score < 1).toBe(true);
  });

  it('the same answer on PGlite and PostgreSQL: ids, order, scores, titles and snippets of a seeded query', async () => {
    const res = await search('rest', 'opAll', { query: 'benefits', pageSize: 200 });
    const got = (res.body.items as { type: string; id: string; score: number; title: string; snippet: string }[]).map((h) => [h.type, h.id, h.score, h.title, h.snippet]);
    expect(got).toEqual(GOLDEN);
  });

  it('the database keeps the vectors: a task created through the API is found at once, and a changed title replaces the old words', async () => {
    const created = await w.rest('opAll', 'tasks.create', { clientId: ACME, title: 'Glimmerfox audit for the spring release' });
    expect(created.status).toBe(201);
    const id = (created.body.result ?? created.body).id as string;
    for (const t of TRANSPORTS) expect((await all(t, 'boundKey', { query: 'glimmerf' })).map((h) => h.id)).toEqual([id]);
    await w.s.database.execute(`update tasks set title = 'Quasarwren checklist' where id = '${id}'`);
    expect((await all('rest', 'opAll', { query: 'glimmerfox' })).map((h) => h.id)).toEqual([]);
    expect((await all('rest', 'opAll', { query: 'quasarwren' })).map((h) => h.id)).toEqual([id]);
  });

  it('a query with no words matches nothing; text that looks like query syntax is plain text', async () => {
    for (const query of ['!!! ???', "o'brien & | :* (", '\\', `${MARK}:*&!`]) {
      const res = await search('rest', 'opAll', { query });
      expect(res.status, query).toBe(200);
    }
    expect((await search('rest', 'opAll', { query: '--- ...' })).body).toEqual({ items: [], nextCursor: null });
  });

  it('cursor: pages concatenate to the whole answer; a cursor from another query or an altered one is validation_failed', async () => {
    for (const t of TRANSPORTS) {
      const whole = await search(t, 'opAll', { query: MARK, pageSize: 200 });
      const paged = await all(t, 'opAll', { query: MARK });
      expect(paged.map((h) => h.id)).toEqual((whole.body.items as { id: string }[]).map((h) => h.id));
      const first = await search(t, 'opAll', { query: MARK, pageSize: 2 });
      const other = await search(t, 'opAll', { query: `${MARK} lead`, pageSize: 2, cursor: first.body.nextCursor });
      expect(other.status).toBe(422);
      expect(other.body.code).toBe('validation_failed');
      const altered = await search(t, 'opAll', { query: MARK, cursor: `${first.body.nextCursor}x` });
      expect(altered.status).toBe(422);
    }
  });

  it('bad input is a problem naming the field', async () => {
    for (const t of TRANSPORTS) {
      const cases: [Record<string, unknown>, string][] = [
        [{ query: '' }, '/query'],
        [{ query: '   ' }, '/query'],
        [{ query: 'x'.repeat(201) }, '/query'],
        [{ query: MARK, types: ['nope'] }, '/types/0'],
        [{ query: MARK, types: [] }, '/types'],
        [{ query: MARK, pageSize: 0 }, '/pageSize'],
      ];
      for (const [input, pointer] of cases) {
        const res = await search(t, 'opAll', input);
        expect(res.status, JSON.stringify(input)).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect((res.body.errors as { pointer: string }[]).map((e) => e.pointer), JSON.stringify(input)).toContain(pointer);
      }
    }
  });
});

describe('search.query: contact personal data', () => {
  const priya = SEEDED_CONTACTS.find((c) => c.id === 'con_demo_acme_priya')!;
  const queries = [priya.email, priya.name, priya.phone, 'Natarajan', priya.email.toLowerCase(), 'quentin'];

  it('with pii:read a contact is found by name, e-mail and phone, and shown by name', async () => {
    for (const t of TRANSPORTS) {
      for (const q of queries.slice(0, 5)) {
        const hits = await all(t, 'opAll', { query: q });
        expect(hits.map((h) => h.id), q).toContain(priya.id);
        expect(hits.find((h) => h.id === priya.id)!.title).toBe(priya.name);
      }
      expect((await all(t, 'boundKey', { query: priya.email })).map((h) => h.id)).toEqual([priya.id]);
    }
  });

  it('without pii:read: no hit for a name, e-mail or phone, the same answer as for a random string', async () => {
    for (const t of TRANSPORTS) {
      for (const who of ['opAllNoPii', 'boundKeyNoPii', 'clientAdmin', 'unboundKeyNoPii'] as const) {
        const random = await search(t, who, { query: `q${Math.random().toString(36).slice(2)}`, pageSize: 200 });
        for (const q of queries) {
          const res = await search(t, who, { query: q, pageSize: 200 });
          expect(res.status).toBe(200);
          expect(res.body.items.length, `${who} ${q}`).toBe(random.body.items.length);
          expect(res.body, `${who} ${q}`).toEqual(random.body);
        }
        // Found by job title, shown without a name.
        const byTitle = await all(t, who, { query: 'benefits director' });
        const contactHits = byTitle.filter((h) => h.type === 'contact');
        expect(contactHits.map((h) => h.id)).toContain(priya.id);
        for (const h of contactHits) expect(h.title).toBe('Benefits Director');
      }
    }
  });

  it('no caller without pii:read received a seeded name, e-mail or phone in any answer of this file', () => {
    expect(seenWithoutPii.length).toBeGreaterThan(50);
    const needles = [...SEEDED_PERSONAL_DATA, 'Quentin', 'quentin.'].flatMap((v) => [v, v.toLowerCase()]);
    for (const seen of seenWithoutPii) {
      const text = JSON.stringify(seen.body);
      for (const needle of needles) expect(text.includes(needle), `${seen.what} leaked ${needle}`).toBe(false);
    }
  });
});
