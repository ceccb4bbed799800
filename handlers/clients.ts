// clients.*: the organisations the platform serves. Every read keeps the client scope (visibility
// rule 5): a client outside it is 404. Summary, health and readiness are computed from rows when
// asked (handlers/client-standing.ts holds the formulas the contract records).
import { and, eq, getTableColumns, type SQL } from 'drizzle-orm';
import { clients } from '../runtime/data/schema.ts';
import { hubPublications } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { startNamePage } from '../runtime/data/paging.ts';
import { notFound, ProblemError } from '../runtime/problem-error.ts';
import { listClientMemberships } from './memberships.ts';
import { health, hubSnapshot, latestHub, launchReadiness, summary } from './client-standing.ts';
import { toClient, toHubPublication, type Client, type ClientRow, type HubPublication } from './mappers/crm.ts';
import { actorName, invalidTransition } from './shared.ts';
import type { ClientsHandlers } from '../generated/handlers/clients.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];

/** The client when it is in the caller's client scope; 404 otherwise (and for one that does not exist). */
export async function visibleClient(ctx: HandlerContext, clientId: string): Promise<ClientRow> {
  if (!ctx.policy.canReadClient(clientId)) throw notFound('Client');
  const [row] = await ctx.db.select().from(clients).where(eq(clients.id, clientId));
  if (!row) throw notFound('Client');
  return row;
}

async function list(input: Schemas['ClientsListInput'], ctx: HandlerContext): Promise<Page<Client>> {
  const page = await startNamePage(ctx.db, input, 'clients.list', { status: input.status });
  const filters: (SQL | undefined)[] = [
    ctx.policy.clientWhere(clients.id),
    input.status !== undefined ? eq(clients.status, input.status) : undefined,
    page.after(clients.name, clients.id),
  ];
  const rows = await ctx.db
    .select(getTableColumns(clients))
    .from(clients)
    .where(and(...filters))
    .orderBy(...page.orderBy(clients.name, clients.id))
    .limit(page.fetch);
  return page.finish(rows, toClient);
}

async function get(input: { client_id: string }, ctx: HandlerContext): Promise<Client> {
  return toClient(await visibleClient(ctx, input.client_id));
}

async function clientSummary(input: { client_id: string }, ctx: HandlerContext) {
  return summary(ctx.db, await visibleClient(ctx, input.client_id), ctx.now);
}

async function clientHealth(input: { client_id: string }, ctx: HandlerContext) {
  return health(ctx.db, await visibleClient(ctx, input.client_id), ctx.now);
}

async function clientLaunchReadiness(input: { client_id: string }, ctx: HandlerContext) {
  return launchReadiness(ctx.db, await visibleClient(ctx, input.client_id), ctx.now);
}

/** Tier 2: runs once approved, as the proposer. Nothing changed since the last version: that version. */
async function publishHub(input: { client_id: string; note?: string }, ctx: HandlerContext): Promise<HubPublication> {
  const client = await visibleClient(ctx, input.client_id);
  if (client.status === 'offboarded') throw invalidTransition("An offboarded client's hub cannot be published.");
  const { content, hash } = await hubSnapshot(ctx.db, client);
  const latest = await latestHub(ctx.db, client.id);
  if (latest && latest.contentHash === hash) return toHubPublication(latest);
  const version = (latest?.version ?? 0) + 1;
  const [row] = await ctx.db
    .insert(hubPublications)
    .values({
      clientId: client.id,
      version,
      contentHash: hash,
      content,
      url: `${ctx.baseUrl.replace(/\/+$/, '')}/hub/${encodeURIComponent(client.id)}/${version}`,
      note: input.note ?? null,
      publishedAt: ctx.now,
      publishedByKind: ctx.principal.kind,
      publishedById: ctx.principal.id,
      publishedByName: await actorName(ctx.db, ctx.principal.id),
    })
    .onConflictDoNothing()
    .returning();
  if (!row) throw new ProblemError('conflict', 'Another version of this hub was published at the same time; try again.');
  return toHubPublication(row);
}

export const clientsHandlers = {
  'clients.list': list,
  'clients.get': get,
  'clients.summary': clientSummary,
  'clients.health': clientHealth,
  'clients.launch_readiness': clientLaunchReadiness,
  'clients.memberships.list': listClientMemberships,
  'clients.publish_hub': publishHub,
} satisfies ClientsHandlers;
