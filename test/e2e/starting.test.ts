// The port opens before the app is ready (the authenticator's key-revocation listener, the shared
// rate limiter): a request in that window gets a problem document, 503 unavailable with Retry-After,
// never a bare text answer; once ready, the same request is served.
import { afterAll, describe, expect, it } from 'vitest';
import { firstAnswer } from '../support/process.ts';
import { startGatedTestServer, type TestServer } from '../support/server.ts';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

describe('a request before the server is ready', () => {
  it('answers 503 unavailable as a problem document with Retry-After, then serves', async () => {
    const { port, open, started: starting, closeAuthenticator } = await startGatedTestServer();
    cleanups.push(closeAuthenticator);
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
