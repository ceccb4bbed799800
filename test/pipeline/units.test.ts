// Small stage functions: problems, validation errors, coercion, idempotency keys, deprecation headers.
import { describe, expect, it } from 'vitest';
import type { OperationDef } from '../../runtime/contract-types.ts';
import { canonicalJson, fingerprint, parseIdempotencyKey } from '../../runtime/pipeline/idempotency.ts';
import { coerceParams, fieldErrors } from '../../runtime/pipeline/validate.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import { problemBody, problemHeaders, retryable } from '../../runtime/problem-documents.ts';
import { renderResult } from '../../runtime/http/rest/index.ts';
import { fixtureOperationsById } from './fixtures.ts';

describe('problems', () => {
  it('builds the RFC 9457 members and never leaks an unexpected error', () => {
    const body = problemBody(new Error('secret'), '/v1/x', 'req_1', 'http://b');
    expect(body).toEqual({
      type: 'http://b/problems/internal_error',
      title: 'Internal error',
      status: 500,
      detail: expect.not.stringContaining('secret'),
      code: 'internal_error',
      instance: '/v1/x',
      requestId: 'req_1',
      retryable: true,
    });
    const scoped = problemBody(new ProblemError('insufficient_scope', 'd', { extra: { requiredScope: 'a:b', status: 999 } }), '/', 'r', 'http://b');
    expect(scoped.status).toBe(403);
    expect(scoped.requiredScope).toBe('a:b');
    expect(problemHeaders(new ProblemError('not_configured', 'x'))).toEqual({ 'Retry-After': '30' });
    expect(retryable('validation_failed')).toBe(false);
    expect(retryable('idempotency_key_in_progress')).toBe(true);
  });
});

describe('validation errors and coercion', () => {
  it('points at missing and unknown properties, escaping ~ and /', () => {
    expect(
      fieldErrors([
        { instancePath: '/a', keyword: 'required', params: { missingProperty: 'b/c' } },
        { instancePath: '', keyword: 'additionalProperties', params: { additionalProperty: 'x~y' } },
        { instancePath: '/n', keyword: 'type', params: {}, message: 'must be integer' },
        { instancePath: '/n', keyword: 'type', params: {}, message: 'must be integer' },
      ]),
    ).toEqual([
      { pointer: '/a/b~1c', message: 'is required' },
      { pointer: '/x~0y', message: 'is not a known field' },
      { pointer: '/n', message: 'must be integer' },
    ]);
  });
  it('coerces query strings by parameter type and leaves junk for the validator', () => {
    const op = fixtureOperationsById['fx.list']!;
    expect(coerceParams(op, { limit: '5', flag: 'false', tags: ['a,b', 'c'] })).toEqual({ limit: 5, flag: false, tags: ['a', 'b', 'c'] });
    expect(coerceParams(op, { limit: '5x', flag: 'yes' })).toEqual({ limit: '5x', flag: 'yes' });
  });
});

describe('idempotency keys', () => {
  it('accepts quoted and bare UUIDs, refuses anything else', () => {
    const id = '8e03978e-40d5-43e8-bc93-6894a57f9324';
    expect(parseIdempotencyKey(id)).toBe(id);
    expect(parseIdempotencyKey(`"${id.toUpperCase()}"`)).toBe(id);
    expect(parseIdempotencyKey(undefined)).toBeNull();
    expect(() => parseIdempotencyKey('abc')).toThrow(ProblemError);
  });
  it('fingerprints the canonical input', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
    expect(fingerprint('x', { a: 1, b: 2 })).toBe(fingerprint('x', { b: 2, a: 1 }));
    expect(fingerprint('x', { a: 1 })).not.toBe(fingerprint('y', { a: 1 }));
  });
});

describe('deprecation headers', () => {
  it('a deprecated operation answers Deprecation @seconds, Sunset HTTP-date and two Link relations', () => {
    const op = {
      ...fixtureOperationsById['fx.get']!,
      deprecated: {
        since: '2027-01-01T00:00:00Z',
        sunset: '2027-07-01T00:00:00Z',
        link: 'https://x/changelog#v2',
        successor: 'v2',
        successorLink: 'https://x/v2',
      },
    } satisfies OperationDef;
    const res = renderResult({ status: 200, body: { ok: true }, outcome: 'read', headers: {} }, op);
    expect(res.headers.get('deprecation')).toBe('@1798761600');
    expect(res.headers.get('sunset')).toBe('Thu, 01 Jul 2027 00:00:00 GMT');
    expect(res.headers.get('link')).toBe('<https://x/changelog#v2>; rel="deprecation", <https://x/v2>; rel="successor-version"');
    const plain = renderResult({ status: 200, body: { ok: true }, outcome: 'read', headers: {} }, fixtureOperationsById['fx.get']!);
    expect(plain.headers.get('deprecation')).toBeNull();
    expect(plain.headers.get('link')).toBeNull();
  });
});
