// Handler results are checked against the contract's output schema: a fixture operation whose handler
// returns the wrong shape answers 500 internal_error, and the log names the request id, the operation,
// each JSON pointer and its message. Off (SVC_VALIDATE_RESPONSES unset), the same result goes out.
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type Registry } from '../../runtime/app.ts';
import { loadConfig } from '../../runtime/config.ts';
import type { Database } from '../../runtime/data/client.ts';
import type { ValidateFn } from '../../runtime/pipeline/validate.ts';
import { toRouterPath } from '../../runtime/http/route-path.ts';
import { svcRegistry } from '../../bin/wiring.ts';
import { freshDatabase } from '../support/db.ts';
import { fakeAuthenticator, fixtureOperationsById, principal } from './fixtures.ts';

const BASE = 'http://svc.test';
const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, strict: false });
const op = { ...fixtureOperationsById['fx.boom']!, id: 'fx.shape', summary: 'fx.shape', path: '/v1/fx:shape' };
const resultSchema = {
  type: 'object',
  required: ['id', 'count'],
  properties: { id: { type: 'string' }, count: { type: 'integer' } },
  additionalProperties: false,
};

let database: Database;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database?.close();
});

function app(validate: boolean, logs: string[]) {
  const registry: Registry = {
    ...svcRegistry(),
    operationsById: { [op.id]: op },
    validators: { [op.id]: ajv.compile({ type: 'object', additionalProperties: false }) as unknown as ValidateFn },
    resultValidators: { [op.id]: ajv.compile(resultSchema) as unknown as ValidateFn },
    routes: [{ id: op.id, method: op.method, path: op.path, routerPath: toRouterPath(op.path) }],
    tools: [],
    handlers: { [op.id]: async () => ({ id: 42, extra: true }) },
  };
  return createApp({
    database,
    config: loadConfig({ SVC_VALIDATE_RESPONSES: validate ? 'true' : 'false' }, { baseUrl: BASE }),
    authenticator: fakeAuthenticator({ alice: principal('usr_alice') }),
    registry,
    log: (m) => logs.push(m),
  });
}

describe('handler results against the contract', () => {
  it('a wrong shape answers 500 internal_error and logs the operation, each pointer and its message', async () => {
    const logs: string[] = [];
    const svc = app(true, logs);
    try {
      const res = await svc.app.request(`${BASE}/v1/fx:shape`, { headers: { authorization: 'Bearer alice' } });
      expect(res.status).toBe(500);
      const body = await res.json();
      expect(body.code).toBe('internal_error');
      expect(JSON.stringify(body)).not.toContain('extra');
      const line = logs.find((l) => l.includes('does not match the contract'));
      expect(line).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ requestId: body.requestId, operationId: expect.any(String) });
      expect(line).toContain('the result of fx.shape does not match the contract');
      expect(line).toContain('/id: must be string');
      expect(line).toContain('/count: is required');
      expect(line).toContain('/extra: is not a known field');
    } finally {
      await svc.close();
    }
  });

  it('is opt-in outside tests: with SVC_VALIDATE_RESPONSES off the result goes out as the handler made it', async () => {
    const logs: string[] = [];
    const svc = app(false, logs);
    try {
      const res = await svc.app.request(`${BASE}/v1/fx:shape`, { headers: { authorization: 'Bearer alice' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ id: 42, extra: true });
      expect(logs).toEqual([]);
    } finally {
      await svc.close();
    }
  });

  it('SVC_VALIDATE_RESPONSES is read by loadConfig and is on in this suite', () => {
    expect(loadConfig({ SVC_VALIDATE_RESPONSES: 'true' }).validateResponses).toBe(true);
    expect(loadConfig({}).validateResponses).toBe(false);
    expect(process.env.SVC_VALIDATE_RESPONSES).toBe('true');
  });
});
