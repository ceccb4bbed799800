import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { commonHeaders, limitCredential, RateLimiter } from '../../runtime/http/headers/index.ts';
import { parseTraceparent, requestIdFrom, traceContext } from '../../runtime/http/headers/trace.ts';
import type { AppEnv } from '../../runtime/http/app-env.ts';
import type { Principal } from '../../runtime/handler-types.ts';
import { problemBody, problemHeaders } from '../../runtime/problem-documents.ts';

const principal = { credentialId: 'key_1' } as Principal;

describe('traceparent', () => {
  const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  it('propagates a valid incoming trace id with a new span', () => {
    const t = traceContext(valid);
    expect(t.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(t.parentId).toBe('00f067aa0ba902b7');
    expect(t.spanId).not.toBe('00f067aa0ba902b7');
    expect(t.header).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
  });
  it.each([
    ['all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['all-zero parent id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['upper case', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
    ['short', '00-4bf92f-00f067aa0ba902b7-01'],
    ['garbage', 'hello'],
  ])('starts a new trace on an invalid one (%s)', (_name, value) => {
    expect(parseTraceparent(value)).toBeNull();
    const t = traceContext(value);
    expect(t.traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(t.header).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(t.traceId).not.toBe('0'.repeat(32));
  });
  it('keeps a short request id and replaces an unsafe one', () => {
    expect(requestIdFrom('abc-123')).toBe('abc-123');
    expect(requestIdFrom('a b<script>')).toMatch(/^req_/);
    expect(requestIdFrom(undefined)).toMatch(/^req_/);
  });
});

describe('rate limiter', () => {
  it('counts per key in a fixed window and resets', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ limit: 2, windowSeconds: 60, now: () => now });
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 60, resetAt: 1060 });
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.take('b').allowed).toBe(true);
    now += 30_000;
    expect(limiter.take('a')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 30 });
    now += 30_000;
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 1 });
    limiter.sweep(now + 120_000);
    expect(limiter.size).toBe(0);
  });
});

describe('common headers middleware', () => {
  function app(limit = 600) {
    const limiter = new RateLimiter({ limit, windowSeconds: 60 });
    const a = new Hono<AppEnv>();
    a.use(commonHeaders({ apiVersion: '1.0', limiter }));
    a.get('/auth', (c) => {
      limitCredential(c, limiter, principal);
      return c.json({ ok: true });
    });
    a.get('/boom', () => {
      throw new Error('secret internals');
    });
    a.onError((err, c) => c.json(problemBody(err, c.req.path, c.get('requestId'), 'http://x'), 500, problemHeaders(err)));
    return a;
  }
  it('sets every header on success, error and unknown routes', async () => {
    const a = app();
    for (const path of ['/auth', '/boom', '/nowhere']) {
      const res = await a.request(path, { headers: { 'x-request-id': 'rid-1' } });
      expect(res.headers.get('x-request-id')).toBe('rid-1');
      expect(res.headers.get('x-svc-api-version')).toBe('1.0');
      expect(res.headers.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      expect(res.headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
      expect(res.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
      expect(res.headers.get('x-ratelimit-limit')).toBe('600');
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    }
    const boom = await a.request('/boom');
    expect(JSON.stringify(await boom.json())).not.toContain('secret internals');
  });
  it('sends the API version in the header the contract names (service.apiVersionHeader), any case', async () => {
    const a = new Hono<AppEnv>();
    a.use(commonHeaders({ apiVersion: '2.3', apiVersionHeader: 'X-Notes-Api-Version', limiter: new RateLimiter({ limit: 600, windowSeconds: 60 }) }));
    a.get('/ok', (c) => c.json({ ok: true }));
    for (const path of ['/ok', '/nowhere']) {
      const res = await a.request(path);
      expect(res.headers.get('x-notes-api-version')).toBe('2.3');
      expect(res.headers.get('x-svc-api-version')).toBeNull();
    }
  });
  it('answers 429 rate_limited with Retry-After when the credential window is used up', async () => {
    const a = app(1);
    expect((await a.request('/auth')).status).toBe(200);
    const res = await a.request('/auth');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = await res.json();
    expect(body.code).toBe('rate_limited');
    expect(body.retryable).toBe(true);
  });
});
