// The port opens before the app is ready (the authenticator's key-revocation listener, the shared
// rate limiter): a request in that window gets a problem document, 503 unavailable with Retry-After,
// never a bare text answer; once ready, the same request is served.
import { afterAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../runtime/auth/authenticate.ts';
import { loadConfig } from '../../runtime/config.ts';
import { service } from '../../generated/registry.ts';
import { freshDatabase } from '../support/db.ts';
import { freePort } from '../support/process.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

async function firstAnswer(url: string): Promise<Response> {
  for (let i = 0; i < 500; i++) {
    try {
      return await fetch(url);
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error(`${url} never answered`);
}

describe('a request before the server is ready', () => {
  it('answers 503 unavailable as a problem document with Retry-After, then serves', async () => {
    const port = await freePort();
    const database = await freshDatabase();
    const config = loadConfig({}, { port });
    const authenticator = createAuthenticator({ db: database.db, database, config, scopes: service.scopes, roleScopes: service.roleScopes });
    cleanups.push(() => authenticator.close());
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated = { ...authenticator, ready: () => gate.then(() => authenticator.ready()) };

    const starting = startTestServer({ port, database, app: { authenticator: gated } });
    const early = await firstAnswer(`http://127.0.0.1:${port}/v1/meta`);
    expect(early.status).toBe(503);
    expect(early.headers.get('content-type')).toBe('application/problem+json');
    expect(early.headers.get('retry-after')).toBe('5');
    expect(await early.json()).toMatchObject({ status: 503, code: 'unavailable', instance: '/v1/meta', retryable: true });

    open();
    const server: TestServer = await starting;
    cleanups.push(() => server.close());
    const ready = await fetch(`${server.url}/v1/meta`, { headers: { authorization: `Bearer ${server.credentials.operatorKey}` } });
    expect(ready.status).toBe(200);
  });
});
