// events.stream over Server-Sent Events: `retry:` first, id/event/data frames, live delivery through
// LISTEN/NOTIFY, resume with Last-Event-ID (winning over `after`) missing nothing and repeating
// nothing, visibility per principal kind (table-driven) identical to the feed, and the cap on open
// streams per credential.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { limits } from '../../generated/contract.ts';
import { addGrant, addKey, addMembership, addUser } from '../auth/fixtures.ts';
import { openSse as openSse_, type Frame, type Sse } from '../support/sse.ts';

const SIGN_IN = 'openid email profile';
let s: TestServer;
let idp: TestIdp;
const token = (sub: string) => idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: SIGN_IN, client_id: s.credentials.oauthClientId });

const openSse = (credential: string, query = '', headers: Record<string, string> = {}): Promise<Sse> =>
  openSse_(`${s.url}/v1/events:stream${query}`, credential, headers);
async function createTask(credential: string, draft: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${s.url}/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ title: `streamed ${randomUUID()}`, ...draft }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { result: { id: string } }).result.id;
}
const subjectOf = (f: Frame) => (JSON.parse(f.data!) as { subjectId: string }).subjectId;

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
});

describe('events.stream', () => {
  it('sends retry first, then each new event live as id/event/data within a second', async () => {
    const sse = await openSse(s.credentials.operatorKey);
    expect(sse.status).toBe(200);
    expect(sse.contentType).toMatch(/^text\/event-stream/);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const taskId = await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId });
    const [frame] = await sse.events(1, 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(sse.frames[0]).toEqual({ retry: '5000' });
    expect(frame!.event).toBe('task.created');
    const data = JSON.parse(frame!.data!) as { id: string; subjectId: string; type: string };
    expect(data).toMatchObject({ id: frame!.id, subjectId: taskId, type: 'task.created' });
    sse.close();
  });

  it('a client that reconnects with Last-Event-ID misses nothing and sees nothing twice (and it wins over after)', async () => {
    const first = await openSse(s.credentials.operatorKey);
    await new Promise((r) => setTimeout(r, 200));
    const a = await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId });
    const [fa] = await first.events(1);
    expect(subjectOf(fa!)).toBe(a);
    first.close();
    const missed = [
      await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId }),
      await createTask(s.credentials.operatorKey, { clientId: s.credentials.otherClientId }),
    ];
    // `after` names an older event; Last-Event-ID wins.
    const feed = (await (await fetch(`${s.url}/v1/events?pageSize=1`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } })).json()) as { items: { id: string }[] };
    const second = await openSse(s.credentials.operatorKey, `?after=${feed.items[0]!.id}`, { 'last-event-id': fa!.id! });
    const resumed = await second.events(2);
    const live = await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId });
    const all = await second.events(3);
    expect(all.map(subjectOf)).toEqual([...missed, live]);
    expect(new Set(all.map((f) => f.id)).size).toBe(3);
    expect(resumed.map((f) => f.id)).not.toContain(fa!.id);
    second.close();
  });

  const table: { who: string; credential: () => Promise<string>; sees: ('acme' | 'globex' | 'internal')[] }[] = [
    { who: 'operator with all clients (OAuth)', credential: () => token(s.credentials.operatorSub), sees: ['acme', 'globex', 'internal'] },
    { who: 'scoped operator (Acme)', credential: () => token(s.credentials.scopedOperatorSub as string), sees: ['acme', 'internal'] },
    { who: 'client admin of Acme', credential: () => token(s.credentials.clientAdminSub), sees: ['acme'] },
    { who: 'key bound to Acme', credential: async () => s.credentials.serviceKey, sees: ['acme'] },
    { who: 'unbound operator key', credential: async () => s.credentials.operatorKey, sees: ['acme', 'globex'] },
  ];
  it('carries exactly what the feed shows, per principal kind (never another client or an internal event to a client admin or key)', async () => {
    const streams = await Promise.all(table.map(async (row) => ({ row, sse: await openSse(await row.credential(), '?types=task.created') })));
    for (const { sse } of streams) expect(sse.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const owner = await token(s.credentials.operatorSub);
    const made = {
      acme: await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId }),
      globex: await createTask(s.credentials.operatorKey, { clientId: s.credentials.otherClientId }),
      internal: await createTask(owner, {}),
    };
    for (const { row, sse } of streams) {
      const got = await sse.events(row.sees.length);
      await new Promise((r) => setTimeout(r, 300));
      expect(sse.frames.filter((f) => f.id).map(subjectOf), row.who).toEqual(row.sees.map((k) => made[k]));
      sse.close();
      void got;
    }
  });

  it(`caps open streams per credential at ${limits.eventStreamsPerCredential}`, async () => {
    const open: Sse[] = [];
    for (let i = 0; i < limits.eventStreamsPerCredential; i++) open.push(await openSse(s.credentials.serviceKey));
    expect(open.every((o) => o.status === 200)).toBe(true);
    const over = await openSse(s.credentials.serviceKey);
    expect(over.status).toBe(429);
    open.pop()!.close();
    await new Promise((r) => setTimeout(r, 300));
    const again = await openSse(s.credentials.serviceKey);
    expect(again.status).toBe(200);
    for (const o of [...open, again]) o.close();
  });

  it('an unknown Last-Event-ID is 404, a clientId outside the reach is 404', async () => {
    expect((await openSse(s.credentials.serviceKey, '', { 'last-event-id': 'evt_nope' })).status).toBe(404);
    expect((await openSse(s.credentials.serviceKey, `?clientId=${s.credentials.otherClientId}`)).status).toBe(404);
  });
});

// The principal re-check: a stream ends when its credential or the person's right to read ends.
// Each case opens a stream, shows it is live, makes the change, and requires the server to end the
// stream within a few seconds (the change is announced at commit; the 15 s beat is the fallback).
describe('events.stream ends with its principal', () => {
  const ENDS_WITHIN_MS = 3000;
  async function endsSoon(sse: Sse, ms = ENDS_WITHIN_MS): Promise<number> {
    const started = Date.now();
    let timer!: ReturnType<typeof setTimeout>;
    const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)));
    const outcome = await Promise.race([sse.ended.then(() => 'ended' as const), timeout]);
    clearTimeout(timer);
    expect(outcome, 'the server ended the stream').toBe('ended');
    return Date.now() - started;
  }
  async function live(sse: Sse, credential: string): Promise<void> {
    expect(sse.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const before = sse.frames.filter((f) => f.id).length;
    await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId });
    await sse.events(before + 1);
    void credential;
  }
  /** A client admin of Acme with its own memberships (events:read, tasks:read) and grant. */
  async function person(): Promise<{ userId: string; sub: string; token: string; eventsMembership: string; grantId: string }> {
    const u = await addUser(s.database, { kind: 'client_admin', role: 'client_admin' });
    const eventsMembership = await addMembership(s.database, { userId: u.id, clientId: s.credentials.clientId, role: 'events:read' });
    await addMembership(s.database, { userId: u.id, clientId: s.credentials.clientId, role: 'tasks:read' });
    const grantId = await addGrant(s.database, { userId: u.id, oauthClientId: s.credentials.oauthClientId, scopes: ['events:read', 'tasks:read'] });
    return { userId: u.id, sub: u.sub, token: await token(u.sub), eventsMembership, grantId };
  }
  async function post(credential: string, path: string): Promise<{ status: number; body: any }> {
    const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${credential}`, 'idempotency-key': randomUUID() } });
    return { status: res.status, body: await res.json() };
  }

  it('when the OAuth access token expires (its exp)', async () => {
    const u = await person();
    const exp = Math.floor(Date.now() / 1000) + 3;
    const short = await idp.issueToken({ sub: u.sub, aud: `${s.config.baseUrl}/mcp`, scope: SIGN_IN, client_id: s.credentials.oauthClientId, exp });
    const sse = await openSse(short);
    await live(sse, short);
    await endsSoon(sse, 6000);
    // It ended at the token's exp, not before.
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000);
    // A long-lived token's stream is still open meanwhile.
    const long = await openSse(u.token);
    await live(long, u.token);
    long.close();
  });

  it('when its API key is revoked (by the key itself)', async () => {
    const key = await addKey(s.database, { ownerUserId: s.credentials.operatorUserId as string, mode: 'test' });
    const sse = await openSse(key.secret);
    await live(sse, key.secret);
    expect((await post(key.secret, `/v1/api-keys/${key.id}:revoke`)).status).toBe(200);
    expect(await endsSoon(sse)).toBeLessThan(ENDS_WITHIN_MS);
    // The operator's other streams go on.
    const other = await openSse(s.credentials.operatorKey);
    await live(other, s.credentials.operatorKey);
    other.close();
  });

  it("when the person's membership that gave events:read is revoked", async () => {
    const u = await person();
    const sse = await openSse(u.token);
    await live(sse, u.token);
    const proposed = await post(s.credentials.operatorKey, `/v1/clients/${s.credentials.clientId}/memberships/${u.eventsMembership}:revoke`);
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(202);
    const admin = await token(s.credentials.adminSub as string);
    expect((await post(admin, `/v1/approvals/${proposed.body.approval.id}:approve`)).status).toBe(200);
    expect(await endsSoon(sse)).toBeLessThan(ENDS_WITHIN_MS);
    // A new stream is refused: the person no longer holds events:read.
    expect((await openSse(u.token)).status).toBe(403);
  });

  it('when its OAuth grant is revoked', async () => {
    const u = await person();
    const sse = await openSse(u.token);
    await live(sse, u.token);
    expect((await post(u.token, `/v1/oauth-grants/${u.grantId}:revoke`)).status).toBe(200);
    expect(await endsSoon(sse)).toBeLessThan(ENDS_WITHIN_MS);
  });
});
