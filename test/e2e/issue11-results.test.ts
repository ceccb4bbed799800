// Every result of the 19 clients, reviews, CRM and campaign operations matches the contract's output
// schema exactly as published in generated/openapi.json (ajv, JSON Schema 2020-12), including the
// results of approved Tier 2 writes stored on their approvals. PGlite, and PostgreSQL with DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import openapi from '../../generated/openapi.json' with { type: 'json' };
import { startServerWithIdp, type CallerName, type World } from '../support/world.ts';

let w: World;
const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
(addFormats as unknown as typeof addFormats.default)(ajv);
ajv.addSchema(openapi as object, 'openapi');

function schemaName(operationId: string): string {
  return operationId
    .split(/[._]/)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('') + 'Output';
}

function check(operationId: string, value: unknown): void {
  const validate = ajv.getSchema(`openapi#/components/schemas/${schemaName(operationId)}`);
  if (!validate) throw new Error(`no schema for ${operationId}`);
  const ok = validate(value);
  expect(ok, `${operationId}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value).slice(0, 500)}`).toBe(true);
}

beforeAll(async () => {
  w = await startServerWithIdp();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

const READS: [string, Record<string, unknown>][] = [
  ['clients.list', {}],
  ['clients.get', { client_id: 'cli_demo_acme' }],
  ['clients.summary', { client_id: 'cli_demo_acme' }],
  ['clients.health', { client_id: 'cli_demo_globex' }],
  ['clients.launch_readiness', { client_id: 'cli_demo_acme' }],
  ['reviews.list', {}],
  ['reviews.get', { review_id: 'rev_demo_acme_plan' }],
  ['crm.leads.list', {}],
  ['crm.accounts.list', {}],
  ['crm.contacts.list', {}],
  ['crm.contacts.search', { query: 'director' }],
  ['crm.opportunities.list', {}],
  ['campaigns.list', {}],
];

describe('results match the published output schemas', () => {
  for (const who of ['opAll', 'clientAdmin', 'boundKey', 'opAllNoPii'] as CallerName[]) {
    it(`reads, as ${who}, over REST and MCP`, async () => {
      for (const [op, input] of READS) {
        for (const res of [await w.rest(who, op, input), await w.mcp(who, op, input)]) {
          if (res.status === 404 || res.status === 403) continue; // not in this caller's audience or reach
          expect(res.status, op).toBe(200);
          check(op, res.body);
        }
      }
    });
  }

  it('commands that ran, and approved Tier 2 results', async () => {
    const lead = await w.rest('opAll', 'crm.lead.create', { title: 'Schema', company: 'Schema Co' });
    expect(lead.status).toBe(201);
    check('crm.lead.create', lead.body.result);
    const tp = await w.mcp('boundKey', 'crm.touchpoint.log', { leadId: 'led_demo_acme_new', channel: 'email', summary: 'Sent deck' });
    expect(tp.status).toBe(201);
    check('crm.touchpoint.log', tp.body.result);

    const approved = async (op: string, input: Record<string, unknown>) => {
      const proposed = await w.rest('unboundKey', op, input);
      expect(proposed.status, JSON.stringify(proposed.body)).toBe(202);
      const decided = await w.approve(proposed.body.approval.id);
      expect(decided.body.result.status, JSON.stringify(decided.body.result.error)).toBe('approved');
      check(op, decided.body.result.result);
    };
    await approved('reviews.release', { review_id: 'rev_demo_globex_faq' });
    await approved('clients.publish_hub', { client_id: 'cli_demo_globex' });
    await approved('crm.opportunity.convert', { opportunity_id: 'opp_demo_globex_clinics' });
    await approved('crm.opportunity.convert', { opportunity_id: 'opp_demo_platform_umbrella' });
    await approved('campaigns.propose_send', { campaign_id: 'cmp_demo_globex_oe', scheduledAt: new Date(Date.now() + 86_400_000).toISOString() });
  });
});
