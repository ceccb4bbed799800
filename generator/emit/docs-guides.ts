// What the generated guides say of the contract they are generated from (docs.ts renders them): the
// examples (a list read, a creating POST and its body, an MCP tool call) are operations of this
// contract, each bullet about a request control appears only when an operation has it, and a guide
// for a surface the contract lacks (OAuth, webhooks) is neither generated nor listed
// (docs/contract-authors.md, "The generated guides").
import type { Model, ModelOperation } from '../model.ts';
import { exampleOperation } from '../guide-examples.ts';
import { exampleObject, exampleValue } from './example-value.ts';

/** The portal's guides (served at /docs/<slug>); `{base_url}` in them is the server's base URL. */
export const GUIDES = [
  { slug: 'rest', title: 'Connect over REST', summary: 'A first call, paging, safe writes and typed clients.' },
  { slug: 'mcp', title: 'Connect over MCP', summary: 'The MCP server and a configuration for each popular MCP client.' },
  { slug: 'oauth', title: 'OAuth for client administrators', summary: 'Signing in, tokens, audiences and the scopes a grant carries.' },
  { slug: 'webhooks', title: 'Webhooks', summary: 'Signed event deliveries, secrets, tests and replays; the events feed.' },
  { slug: 'errors', title: 'Errors and retries', summary: 'Problem documents, every code, and when to retry.' },
] as const;

export type Guide = (typeof GUIDES)[number];

/** The page size the paging example asks for: 20, or the contract's largest when that is smaller. */
const EXAMPLE_PAGE_SIZE = 20;

/** `a`, `a and b`, `a, b and c`. */
export function spoken(items: string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The agent guide's line above the event types: what carries the events this contract emits. */
function eventsLine(feed: boolean, stream: boolean, webhooks: boolean): string {
  const feedText = feed ? `the feed is \`events.list\`${stream ? ' and its SSE stream `events.stream`' : ''}` : stream ? 'the stream is `events.stream`' : '';
  if (webhooks) return `Webhooks are signed under Standard Webhooks${feedText ? `; ${feedText}` : ''}.`;
  if (feedText) return `This contract has no webhooks: ${feedText}.`;
  return 'The operations below emit these event types; this contract has no webhooks and no events feed to read them from.';
}

/** What the contract has that the guides speak of. */
export function surfaceOf(model: Model) {
  const ops = model.operations;
  const has = (id: string) => ops.some((o) => o.def.id === id);
  return {
    metaPath: ops.find((o) => o.def.id === 'meta.get' && o.def.method === 'GET')?.def.path ?? null,
    /** A principal that signs in only by OAuth (client_admin), or operations over OAuth grants. */
    oauth: model.service.principals.includes('client_admin') || ops.some((o) => o.def.id.startsWith('oauth_grants.')),
    /** Webhook-endpoint operations (the webhooks family). */
    webhooks: ops.some((o) => o.def.family === 'webhooks'),
    /** Where endpoints are registered: the webhooks family's shortest path. */
    webhookEndpointsPath: ops.filter((o) => o.def.family === 'webhooks').map((o) => o.def.path).sort((a, b) => a.length - b.length)[0] ?? null,
    oauthGrants: has('oauth_grants.list') && has('oauth_grants.revoke'),
    eventsFeed: has('events.list'),
    eventsStream: has('events.stream'),
    eventsScope: ops.find((o) => o.def.id === 'events.list')?.def.scope ?? null,
    eventsLine: eventsLine(has('events.list'), has('events.stream'), ops.some((o) => o.def.family === 'webhooks')),
    commands: ops.some((o) => o.def.kind === 'command'),
    idempotency: ops.some((o) => o.def.idempotency !== 'none'),
    ifMatch: ops.some((o) => o.def.ifMatch === 'required'),
  };
}

export type Surface = ReturnType<typeof surfaceOf>;

/** The guides this contract gets: OAuth only with OAuth sign-in, webhooks only with webhook endpoints. */
export function guidesOf(surface: Surface): Guide[] {
  return GUIDES.filter((g) => (g.slug === 'oauth' ? surface.oauth : g.slug === 'webhooks' ? surface.webhooks : true));
}

/** The prefix every operation path shares (`/v1`), or '' when they share none. */
export function restBase(model: Model): string {
  const firsts = new Set(model.operations.map((o) => o.def.path.split('/')[1] ?? ''));
  const [only] = firsts;
  return firsts.size === 1 && only ? `/${only}` : '';
}

/** A path with each `{param}` filled with an example value of that parameter. */
function filledPath(op: ModelOperation, model: Model): string {
  return op.def.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = exampleValue(op.inputs.find((i) => i.name === name)?.schema, model.schemas);
    return encodeURIComponent(typeof value === 'string' || typeof value === 'number' ? String(value) : name);
  });
}

function listExample(model: Model, op: ModelOperation | null) {
  if (!op) return null;
  const props = (model.schemas[op.inputName]?.properties ?? {}) as Record<string, unknown>;
  const query = op.inputs.filter((i) => i.location === 'query' && i.required).map((i) => `${i.name}=${encodeURIComponent(String(exampleValue(i.schema, model.schemas)))}`);
  if ('pageSize' in props) query.push(`pageSize=${Math.min(EXAMPLE_PAGE_SIZE, model.limits.pageSizeMax ?? EXAMPLE_PAGE_SIZE)}`);
  return { id: op.def.id, url: `${filledPath(op, model)}${query.length ? `?${query.join('&')}` : ''}` };
}

function createExample(model: Model, op: ModelOperation | null) {
  if (!op) return null;
  const declared = model.guideExamples.create === op.def.id ? model.guideExamples.body : null;
  const notBody = op.inputs.filter((i) => i.location !== 'body').map((i) => i.name);
  const body = declared ?? exampleObject(model.schemas[op.inputName] ?? {}, model.schemas, notBody);
  const hasBody = op.inputs.some((i) => i.location === 'body');
  return {
    id: op.def.id,
    path: filledPath(op, model),
    body: hasBody ? JSON.stringify(body).replace(/'/g, "'\\''") : null,
    idempotency: op.def.idempotency === 'required',
  };
}

/** The MCP guide's example call: meta.get, else a read tool with no required input, else the first read tool (arguments built), else the first tool. */
function toolExample(model: Model) {
  const tools = model.operations.filter((o) => o.def.mcp);
  const reads = tools.filter((o) => o.def.kind === 'read');
  const op =
    reads.find((o) => o.def.id === 'meta.get') ?? reads.find((o) => o.inputs.every((i) => !i.required)) ?? reads[0] ?? tools[0];
  if (!op) return null;
  return { name: op.def.mcp!.name, arguments: JSON.stringify(exampleObject(model.schemas[op.inputName] ?? {}, model.schemas)) };
}

/** The guides' view of the contract: its surface, the examples and the section numbers the REST guide gives them. */
export function guideFacts(model: Model, surface: Surface) {
  const list = listExample(model, exampleOperation('list', model.guideExamples, model.operations));
  const create = surface.commands ? createExample(model, exampleOperation('create', model.guideExamples, model.operations)) : null;
  let n = 0;
  const sections = { meta: surface.metaPath ? ++n : 0, list: list ? ++n : 0, create: create ? ++n : 0, clients: ++n, keyInList: false, keyInCreate: false };
  // The first example sets KEY.
  sections.keyInList = !sections.meta && !!list;
  sections.keyInCreate = !sections.meta && !list && !!create;
  const commandArgs = [surface.idempotency ? '`idempotencyKey`' : '', surface.ifMatch ? '`ifMatch`' : '', '`dryRun`'].filter(Boolean);
  return {
    ...surface,
    restBase: restBase(model),
    listExample: list,
    createExample: create,
    toolExample: toolExample(model),
    sections,
    commandArgs: spoken(commandArgs),
    commandArgsPlural: commandArgs.length > 1,
  };
}
