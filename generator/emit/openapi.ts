// generated/openapi.json: the OpenAPI 3.1 document, every operation with its svc extensions.
import type { JsonSchema } from '../../runtime/contract-types.ts';
import type { Model, ModelOperation } from '../model.ts';
import { COMPONENT_PREFIX } from '../schema.ts';
import { identityMemo } from '../session.ts';

type Doc = Record<string, unknown>;

const ref = (name: string): JsonSchema => ({ $ref: COMPONENT_PREFIX + name });

function json(schema: JsonSchema, mediaType = 'application/json'): Doc {
  return { content: { [mediaType]: { schema } } };
}

function headerParameters(op: ModelOperation): Doc[] {
  const { def } = op;
  if (def.kind !== 'command') return [];
  const out: Doc[] = [];
  if (def.idempotency !== 'none')
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: def.idempotency === 'required',
      description: 'A UUID; a retry with the same key replays the first answer (Idempotency-Replayed: true).',
      schema: { type: 'string', format: 'uuid' },
    });
  if (def.ifMatch === 'required')
    out.push({ name: 'If-Match', in: 'header', required: true, description: "The resource's current ETag.", schema: { type: 'string' } });
  out.push({
    name: 'Prefer',
    in: 'header',
    required: false,
    description: 'dry-run: return the plan and write nothing.',
    schema: { type: 'string', enum: ['dry-run'] },
  });
  return out;
}

function responses(op: ModelOperation, model: Model): Doc {
  const { def } = op;
  const out: Doc = {};
  if (def.kind === 'read') {
    out['200'] = def.stream
      ? { description: 'A Server-Sent Events stream; each event carries one record.', ...json(ref(op.outputName), 'text/event-stream') }
      : { description: def.paged ? 'A page of results.' : 'The result.', ...json(ref(op.outputName)) };
  } else {
    const ran: JsonSchema = {
      type: 'object',
      required: ['outcome', 'result'],
      properties: { outcome: { const: 'ran' }, result: ref(op.outputName) },
    };
    const planned = ref('PlannedOutcome');
    if (def.successStatus === 200) {
      out['200'] = { description: 'The command ran, or (Prefer: dry-run) was planned.', ...json({ oneOf: [ran, planned] }) };
    } else {
      out[String(def.successStatus)] = { description: 'The command ran.', ...json(ran) };
      out['200'] = { description: 'Prefer: dry-run: the plan; nothing was written.', ...json(planned) };
    }
    if (def.tier !== 1) out['202'] = { description: 'Proposed: waits for approval.', ...json(ref('ProposedOutcome')) };
  }
  const byStatus = new Map<number, string[]>();
  for (const code of def.problems) {
    const status = model.service.problems[code]?.status;
    if (status) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: codes.map((c) => `${c}: ${model.service.problems[c].title}`).join('; '),
      'x-svc-problems': codes,
      ...json(ref('Problem'), 'application/problem+json'),
    };
  }
  out.default = { description: 'Any other problem (for example 501 not_implemented); the same problem document.', ...json(ref('Problem'), 'application/problem+json') };
  return out;
}

function operationObject(op: ModelOperation, model: Model): Doc {
  const { def } = op;
  const input = model.schemas[op.inputName];
  const props = (input.properties ?? {}) as Record<string, JsonSchema>;
  const parameters: Doc[] = [];
  const bodyProps: Record<string, JsonSchema> = {};
  const bodyRequired: string[] = [];
  for (const i of op.inputs) {
    if (i.location === 'body') {
      bodyProps[i.name] = props[i.name];
      if (i.required) bodyRequired.push(i.name);
    } else {
      const p: Doc = { name: i.name, in: i.location, required: i.location === 'path' || i.required, schema: props[i.name] };
      if (typeof props[i.name]?.description === 'string') p.description = props[i.name].description;
      parameters.push(p);
    }
  }
  parameters.push(...headerParameters(op));
  const out: Doc = {
    operationId: def.id,
    summary: def.summary,
    description: op.description,
    tags: [def.family],
    parameters: parameters.length ? parameters : undefined,
    responses: responses(op, model),
    'x-svc-family': def.family,
    'x-svc-kind': def.kind,
    'x-svc-scope': def.scope,
    'x-svc-audience': def.audience,
    'x-svc-idempotency': def.idempotency,
    'x-svc-if-match': def.ifMatch,
    'x-svc-emits': def.emits,
    'x-svc-problems': def.problems,
    'x-svc-input': ref(op.inputName),
  };
  out['x-svc-tier'] = def.tier;
  if (def.paged) out['x-svc-paged'] = true;
  if (op.decision) out['x-svc-decision'] = op.decision;
  if (def.mcp) out['x-svc-mcp'] = def.mcp;
  else out['x-svc-mcp-excluded'] = def.mcpReason;
  if (def.deprecated) out.deprecated = true;
  if (Object.keys(bodyProps).length) {
    const body: JsonSchema = { type: 'object', additionalProperties: input.additionalProperties ?? false, properties: bodyProps };
    if (bodyRequired.length) body.required = bodyRequired;
    for (const k of ['description', 'x-svc-decision']) if (k in input) body[k] = input[k];
    out.requestBody = { required: bodyRequired.length > 0, ...json(body) };
  }
  return out;
}

/**
 * A watcher's memos (session.ts). An operation object reads the operation, its own input schema and
 * svc.yaml's problems: all of them are the same while the operation object is (model.ts), so it is
 * keyed on the operation. A path item is keyed on its first operation and kept while its operations
 * are the same ones: unchanged path items stay the same objects, for the memos that follow
 * (openapi-json.ts's text, types-units.ts's units).
 */
const operationObjects = identityMemo<ModelOperation, Doc>();
const pathItems = identityMemo<ModelOperation, { ops: ModelOperation[]; item: Doc }>();

function pathItem(ops: ModelOperation[], model: Model): Doc {
  const known = pathItems.get(ops[0]!);
  if (known && known.ops.length === ops.length && known.ops.every((op, i) => op === ops[i])) return known.item;
  const item: Doc = {};
  for (const op of ops) item[op.def.method.toLowerCase()] = operationObjects.get(op) ?? operationObjects.set(op, operationObject(op, model));
  pathItems.set(ops[0]!, { ops, item });
  return item;
}

export function buildOpenApi(model: Model): Doc {
  const byPath = new Map<string, ModelOperation[]>();
  for (const op of model.operations) {
    const ops = byPath.get(op.def.path);
    if (ops) ops.push(op);
    else byPath.set(op.def.path, [op]);
  }
  const paths: Record<string, Doc> = {};
  for (const [path, ops] of byPath) paths[path] = pathItem(ops, model);
  const webhooks: Record<string, Doc> = {};
  for (const e of model.eventTypes) {
    webhooks[e.name] = {
      post: {
        operationId: `webhook.${e.name}`,
        summary: e.description,
        description: `${e.description} Signed under Standard Webhooks.${e.emittedBy.length ? ` Emitted by ${e.emittedBy.join(', ')}.` : ''}`,
        tags: ['webhooks'],
        security: [],
        requestBody: {
          required: true,
          ...json('Event' in model.schemas ? ref('Event') : { type: 'object', required: ['type'], properties: { type: { const: e.name } } }),
        },
        responses: { '200': { description: 'Any 2xx acknowledges the delivery.' }, '400': { description: 'The delivery is refused and will be retried.' } },
        'x-svc-emitted-by': e.emittedBy,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: model.info.title,
      version: model.info.version,
      description: model.info.description,
      ...(model.info.decision ? { 'x-svc-decision': model.info.decision } : {}),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: 'http://localhost:8787', description: 'svc serve on its default port; replace with your {base_url}.' }],
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    tags: model.families.map((f) => ({ name: f.name, description: f.description })),
    security: [{ apiKey: [] }, { oauth: [] }],
    paths,
    webhooks,
    components: {
      schemas: model.schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_sk_live_/svc_sk_test_', description: 'An API key: Authorization: Bearer svc_sk_live_… (or svc_sk_test_…).' },
        oauth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An OAuth 2.1 access token (audience {base_url}/mcp).' },
      },
    },
    'x-svc-scopes': model.scopes.map((s) => ({ name: s.name, description: s.description, ...(s.decision ? { 'x-svc-decision': s.decision } : {}) })),
    'x-svc-problems': Object.fromEntries(
      model.problems.map((p) => [
        p.code,
        { status: p.status, title: p.title, retry: p.retry, retryable: p.retry !== 'after_fix', retryAfter: p.retryAfter, ...(p.decision ? { 'x-svc-decision': p.decision } : {}) },
      ]),
    ),
    'x-svc-event-types': model.eventTypes.map((e) => ({ name: e.name, description: e.description, emittedBy: e.emittedBy })),
    'x-svc-principals': model.principals.map((p) => ({ name: p.name, description: p.description, ...(p.decision ? { 'x-svc-decision': p.decision } : {}) })),
    'x-svc-limits': model.limits,
  };
}

