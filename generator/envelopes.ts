// Generated component schemas that every contract gets: the problem document and the outcome envelopes.
import type { JsonSchema } from '../runtime/contract-types.ts';
import { COMPONENT_PREFIX } from './schema.ts';

export const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'An RFC 9457 problem document (application/problem+json).',
  required: ['type', 'title', 'status', 'detail', 'code', 'instance', 'requestId', 'retryable'],
  properties: {
    type: { type: 'string', format: 'uri', description: '{base_url}/problems/<code>' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'What went wrong with this request.' },
    code: { type: 'string', description: 'Stable machine identifier; see x-svc-problems.' },
    instance: { type: 'string', description: 'Path of the request.' },
    requestId: { type: 'string' },
    retryable: { type: 'boolean', description: 'Whether a retry is sensible (after Retry-After when present).' },
    errors: {
      type: 'array',
      description: 'validation_failed: each failing field.',
      items: {
        type: 'object',
        required: ['pointer', 'message'],
        properties: { pointer: { type: 'string', description: 'JSON pointer into the input.' }, message: { type: 'string' } },
      },
    },
  },
};

export function plannedOutcome(hasPlan: boolean): JsonSchema {
  return {
    type: 'object',
    description: 'Prefer: dry-run (MCP dryRun): the plan of the write; nothing was written.',
    required: ['outcome', 'plan'],
    properties: {
      outcome: { const: 'planned' },
      plan: hasPlan
        ? { $ref: `${COMPONENT_PREFIX}Plan` }
        : { type: 'object', description: 'The effects the write would have, the events it would emit and whether approval would be needed.' },
    },
  };
}

export function proposedOutcome(hasApproval: boolean): JsonSchema {
  return {
    type: 'object',
    description: 'Tier 2 and 3: a proposal waits for human approval; nothing has happened yet.',
    required: ['outcome', 'approval'],
    properties: {
      outcome: { const: 'proposed' },
      approval: hasApproval ? { $ref: `${COMPONENT_PREFIX}Approval` } : { type: 'object', description: 'The approval to poll.' },
    },
  };
}

/** `{items, nextCursor}` around a page item schema. */
export function pageSchema(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: item },
      nextCursor: { type: ['string', 'null'], description: 'Pass as cursor to get the next page; null on the last page.' },
    },
  };
}
