// events.list: the outbox read oldest first on its sequence, resumable with nextCursor and `after`,
// and visible per principal kind (table-driven): an OAuth operator with all clients sees Acme, Globex
// and internal events; a scoped operator Acme and internal; a client admin of Acme, the Acme-bound
// key and the unbound operator key only client-bound events of their reach (keys are never widened).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const SIGN_IN = 'openid email profile';
let s: TestServer;
let idp: TestIdp;
const tasks: Record<'acme' | 'globex' | 'internal', string> = { acme: '', globex: '', internal: '' };

function token(sub: string): Promise<string> {
  return idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: SIGN_IN, client_id: s.credentials.oauthClientId });
}
async function rest(credential: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
  if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'idempotency-key': randomUUID() });
  return fetch(`${s.url}${path}`, { method: body === undefined ? 'GET' : 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
}
async function createTask(credential: string, draft: Record<string, unknown>): Promise<string> {
  const res = await rest(credential, '/v1/tasks', draft);
  expect(res.status).toBe(201);
  return ((await res.json()) as { result: { id: string } }).result.id;
}
/** Every event subject id the credential sees, following nextCursor with small pages. */
async function feed(credential: string, query = ''): Promise<{ ids: string[]; subjects: string[] }> {
  const ids: string[] = [];
  const subjects: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await rest(credential, `/v1/events?pageSize=2${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: { id: string; subjectId: string; type: string }[]; nextCursor: string | null };
    ids.push(...page.items.map((e) => e.id));
    subjects.push(...page.items.map((e) => e.subjectId));
    cursor = page.nextCursor;
  } while (cursor);
  return { ids, subjects };
}

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
  const owner = await token(s.credentials.operatorSub);
  tasks.acme = await createTask(s.credentials.operatorKey, { title: 'Acme event task', clientId: s.credentials.clientId });
  tasks.globex = await createTask(s.credentials.operatorKey, { title: 'Globex event task', clientId: s.credentials.otherClientId });
  tasks.internal = await createTask(owner, { title: 'Internal event task' });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
});

describe('events.list', () => {
  const table: { who: string; credential: () => Promise<string>; sees: (keyof typeof tasks)[] }[] = [
    { who: 'operator with all clients (OAuth)', credential: () => token(s.credentials.operatorSub), sees: ['acme', 'globex', 'internal'] },
    { who: 'scoped operator (Acme, OAuth)', credential: () => token(s.credentials.scopedOperatorSub as string), sees: ['acme', 'internal'] },
    { who: 'client admin of Acme', credential: () => token(s.credentials.clientAdminSub), sees: ['acme'] },
    { who: 'key bound to Acme', credential: async () => s.credentials.serviceKey, sees: ['acme'] },
    { who: 'unbound operator key', credential: async () => s.credentials.operatorKey, sees: ['acme', 'globex'] },
  ];
  for (const row of table) {
    it(`${row.who} sees exactly ${row.sees.join(', ')}`, async () => {
      const { subjects } = await feed(await row.credential(), '&types=task.created');
      expect(new Set(subjects)).toEqual(new Set(row.sees.map((k) => tasks[k])));
      // Oldest first: in creation order.
      const order = (['acme', 'globex', 'internal'] as const).filter((k) => row.sees.includes(k)).map((k) => tasks[k]);
      expect(subjects).toEqual(order);
    });
  }

  it('two credentials of one owner see the same client-bound feed; the Acme key never another client', async () => {
    const unbound = await feed(s.credentials.operatorKey);
    const bound = await feed(s.credentials.serviceKey);
    expect(bound.ids.every((id) => unbound.ids.includes(id))).toBe(true);
    expect(bound.subjects).not.toContain(tasks.globex);
    expect(unbound.subjects).not.toContain(tasks.internal);
  });

  it('a clientId outside the reach is 404; an altered cursor and an unknown after are problems, never 500', async () => {
    const out = await rest(s.credentials.serviceKey, `/v1/events?clientId=${s.credentials.otherClientId}`);
    expect(out.status).toBe(404);
    const first = (await (await rest(s.credentials.operatorKey, '/v1/events?pageSize=1')).json()) as { nextCursor: string };
    expect(first.nextCursor).toBeTruthy();
    // Altered three ways: its last two characters, a character of its body, and its signature's last
    // character swapped for one that decodes to the same bytes (base64url's unused bits).
    const [body, signature] = first.nextCursor.split('.') as [string, string];
    const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = B64.indexOf(signature.at(-1)!);
    const altered = [
      `${first.nextCursor.slice(0, -2)}${first.nextCursor.endsWith('xx') ? 'yy' : 'xx'}`,
      `${body[0] === 'e' ? 'f' : 'e'}${body.slice(1)}.${signature}`,
      `${body}.${signature.slice(0, -1)}${B64[last ^ 1]}`,
    ];
    expect(Buffer.from(altered[2]!.split('.')[1]!, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    for (const cursor of altered) {
      const bad = await rest(s.credentials.operatorKey, `/v1/events?pageSize=1&cursor=${cursor}`);
      expect(bad.status, cursor).toBe(422);
      expect(((await bad.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer).toBe('/cursor');
    }
    const other = await rest(s.credentials.operatorKey, `/v1/events?pageSize=1&types=task.created&cursor=${first.nextCursor}`);
    expect(other.status).toBe(422);
    const unknown = await rest(s.credentials.operatorKey, '/v1/events?after=evt_doesnotexist');
    expect(unknown.status).toBe(404);
  });

  it('after: a caught-up reader resumes from the last event it saw and misses nothing; an invisible event id is 404', async () => {
    const owner = await token(s.credentials.operatorSub);
    const before = await feed(owner);
    const last = before.ids[before.ids.length - 1]!;
    const caughtUp = (await (await rest(owner, `/v1/events?after=${last}`)).json()) as { items: unknown[]; nextCursor: null };
    expect(caughtUp.items).toEqual([]);
    expect(caughtUp.nextCursor).toBeNull();
    const later = await createTask(s.credentials.operatorKey, { title: 'Later task', clientId: s.credentials.clientId });
    const resumed = await feed(owner, `&after=${last}`);
    expect(resumed.subjects).toEqual([later]);
    // The internal task's event is not visible to the Acme key: resuming after it is 404.
    const internalEvent = before.ids[before.subjects.indexOf(tasks.internal)]!;
    expect((await rest(s.credentials.serviceKey, `/v1/events?after=${internalEvent}`)).status).toBe(404);
  });
});
