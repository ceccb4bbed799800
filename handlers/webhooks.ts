// webhooks.*: endpoints that receive signed event deliveries (Standard Webhooks), their secrets and
// delivery history. Sending lives in runtime/events/webhooks/ (the worker, signing, the SSRF guard).
//
// Who manages what: an endpoint bound to a client is managed by whoever reaches that client (an
// operator in scope, the client's admins); an unbound endpoint (clientId null, operators only) by
// its owner and by operators with every client. Anything else is 404.
import { and, eq, getTableColumns, inArray, isNull, or, gt, type SQL } from 'drizzle-orm';
import { webhookAttempts, webhookDeliveries, webhookEndpoints, webhookSecrets } from '../runtime/data/schema.ts';
import { etagFor } from '../runtime/pipeline/etag.ts';
import { lastSeq } from '../runtime/events/feed.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { invalidField, notFound } from '../runtime/problem-error.ts';
import { sealSecret } from '../runtime/auth/secret-fields.ts';
import { recordAttempt, secretPurpose, send, validSecrets, type DeliveryRow, type EndpointRow } from '../runtime/events/webhooks/deliveries.ts';
import { newWebhookSecret } from '../runtime/events/webhooks/signing.ts';
import { webhookUrlProblem } from '../runtime/events/webhooks/ssrf.ts';
import { limits } from '../generated/contract.ts';
import { checkIfMatch, invalidTransition, requireClient } from './shared.ts';
import type { WebhooksHandlers } from '../generated/handlers/webhooks.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];
type WebhookEndpoint = Schemas['WebhookEndpoint'];
type WebhookDelivery = Schemas['WebhookDelivery'];
type EventType = Schemas['EventType'];

const OVERLAP_MS = limits.webhookSecretOverlapHours * 3_600_000;

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes as EventType[],
    status: row.status as WebhookEndpoint['status'],
    clientId: row.clientId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    etag: etagFor(row.id, row.version),
  };
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType: row.eventType as EventType,
    status: row.status as WebhookDelivery['status'],
    test: row.test,
    attempts: row.attempts,
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    responseStatus: row.responseStatus,
    error: row.error,
    createdAt: row.createdAt.toISOString(),
  };
}

function canManage(ctx: HandlerContext, row: { clientId: string | null; ownerUserId: string }): boolean {
  if (row.clientId !== null) return ctx.policy.canReadClient(row.clientId);
  return ctx.principal.kind === 'operator' && (ctx.policy.allClients || row.ownerUserId === ctx.principal.id);
}

/** Endpoints the caller manages (SQL). */
function manageWhere(ctx: HandlerContext): SQL | undefined {
  const bound = ctx.policy.clientWhere(webhookEndpoints.clientId);
  if (ctx.principal.kind !== 'operator') return bound;
  const unbound = ctx.policy.allClients ? isNull(webhookEndpoints.clientId) : and(isNull(webhookEndpoints.clientId), eq(webhookEndpoints.ownerUserId, ctx.principal.id));
  return or(bound, unbound);
}

async function endpointOf(ctx: HandlerContext, id: string): Promise<EndpointRow> {
  const [row] = await ctx.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  if (!row || !canManage(ctx, row)) throw notFound('Webhook endpoint');
  return row;
}

async function checkUrl(url: string): Promise<void> {
  const problem = await webhookUrlProblem(url);
  if (problem) throw invalidField('/url', problem);
}

// ------------------------------------------------------------------------------------------------
// Reads

async function endpointsList(input: Schemas['WebhooksEndpointsListInput'], ctx: HandlerContext): Promise<Page<WebhookEndpoint>> {
  const { clientId, status } = input;
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const page = await startPage(ctx.db, input, 'webhooks.endpoints.list', { clientId, status });
  const rows = await ctx.db
    .select({ ...getTableColumns(webhookEndpoints), pageKey: pageKeyColumn(webhookEndpoints.createdAt) })
    .from(webhookEndpoints)
    .where(
      and(
        manageWhere(ctx),
        clientId !== undefined ? eq(webhookEndpoints.clientId, clientId) : undefined,
        status !== undefined ? eq(webhookEndpoints.status, status) : undefined,
        page.after(webhookEndpoints.createdAt, webhookEndpoints.id),
      ),
    )
    .orderBy(...page.orderBy(webhookEndpoints.createdAt, webhookEndpoints.id))
    .limit(page.fetch);
  return page.finish(rows, toEndpoint);
}

async function endpointsGet(input: { endpoint_id: string }, ctx: HandlerContext): Promise<WebhookEndpoint> {
  return toEndpoint(await endpointOf(ctx, input.endpoint_id));
}

async function deliveriesList(input: Schemas['WebhooksDeliveriesListInput'], ctx: HandlerContext): Promise<Page<WebhookDelivery>> {
  await endpointOf(ctx, input.endpoint_id);
  const page = await startPage(ctx.db, input, 'webhooks.deliveries.list', { endpointId: input.endpoint_id, status: input.status });
  const rows = await ctx.db
    .select({ ...getTableColumns(webhookDeliveries), pageKey: pageKeyColumn(webhookDeliveries.createdAt) })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, input.endpoint_id),
        input.status !== undefined ? eq(webhookDeliveries.status, input.status) : undefined,
        page.after(webhookDeliveries.createdAt, webhookDeliveries.id),
      ),
    )
    .orderBy(...page.orderBy(webhookDeliveries.createdAt, webhookDeliveries.id))
    .limit(page.fetch);
  return page.finish(rows, toDelivery);
}

// ------------------------------------------------------------------------------------------------
// Commands

async function addSecret(ctx: HandlerContext, endpointId: string): Promise<string> {
  const secret = newWebhookSecret();
  await ctx.db.insert(webhookSecrets).values({
    id: newId('whs'),
    endpointId,
    sealed: await sealSecret(ctx.db, secretPurpose(endpointId), secret),
    createdAt: ctx.now,
  });
  return secret;
}

async function create(input: Schemas['WebhooksEndpointCreateInput'], ctx: HandlerContext): Promise<Schemas['WebhookEndpointWithSecret']> {
  let clientId: string | null = input.clientId ?? null;
  if (clientId !== null) {
    ctx.policy.assertClientInScope(clientId);
    await requireClient(ctx.db, clientId);
  } else if (ctx.principal.kind !== 'operator') {
    // A client admin's endpoint is always bound to its client: the only one, or name it.
    if (ctx.policy.clientIds.length !== 1) throw invalidField('/clientId', 'is required: name the client whose events this endpoint receives');
    clientId = ctx.policy.clientIds[0]!;
  }
  await checkUrl(input.url);
  const id = newId('webhookEndpoint');
  const [row] = await ctx.db
    .insert(webhookEndpoints)
    .values({
      id,
      ownerUserId: ctx.principal.id,
      widened: ctx.policy.widened,
      clientId,
      url: input.url,
      description: input.description ?? '',
      eventTypes: [...input.eventTypes],
      status: 'enabled',
      startSeq: await lastSeq(ctx.db),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  const secret = await addSecret(ctx, id);
  return { ...toEndpoint(row!), secret };
}

async function update(input: Schemas['WebhooksEndpointUpdateInput'], ctx: HandlerContext): Promise<WebhookEndpoint> {
  const row = await endpointOf(ctx, input.endpoint_id);
  checkIfMatch(ctx, etagFor(row.id, row.version));
  if (input.url !== undefined) await checkUrl(input.url);
  const [updated] = await ctx.db
    .update(webhookEndpoints)
    .set({
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.eventTypes !== undefined ? { eventTypes: [...input.eventTypes] } : {}),
      ...(input.status !== undefined ? { status: input.status } : {}),
      version: row.version + 1,
      updatedAt: ctx.now,
    })
    .where(eq(webhookEndpoints.id, row.id))
    .returning();
  return toEndpoint(updated!);
}

async function remove(input: { endpoint_id: string }, ctx: HandlerContext): Promise<Schemas['DeletedRef']> {
  const row = await endpointOf(ctx, input.endpoint_id);
  const deliveries = ctx.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, row.id));
  await ctx.db.delete(webhookAttempts).where(inArray(webhookAttempts.deliveryId, deliveries));
  await ctx.db.delete(webhookDeliveries).where(eq(webhookDeliveries.endpointId, row.id));
  await ctx.db.delete(webhookSecrets).where(eq(webhookSecrets.endpointId, row.id));
  await ctx.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, row.id));
  return { id: row.id, deleted: true };
}

async function rotateSecret(input: { endpoint_id: string }, ctx: HandlerContext): Promise<Schemas['WebhookEndpointWithSecret']> {
  const row = await endpointOf(ctx, input.endpoint_id);
  // A secret already in its overlap ends now (at most two valid at once); the current one overlaps 24 h.
  await ctx.db
    .update(webhookSecrets)
    .set({ validUntil: ctx.now })
    .where(and(eq(webhookSecrets.endpointId, row.id), gt(webhookSecrets.validUntil, ctx.now)));
  await ctx.db
    .update(webhookSecrets)
    .set({ validUntil: new Date(ctx.now.getTime() + OVERLAP_MS) })
    .where(and(eq(webhookSecrets.endpointId, row.id), isNull(webhookSecrets.validUntil)));
  const secret = await addSecret(ctx, row.id);
  const [updated] = await ctx.db
    .update(webhookEndpoints)
    .set({ version: row.version + 1, updatedAt: ctx.now })
    .where(eq(webhookEndpoints.id, row.id))
    .returning();
  return { ...toEndpoint(updated!), secret };
}

async function test(input: Schemas['WebhooksEndpointTestInput'], ctx: HandlerContext): Promise<WebhookDelivery> {
  const endpoint = await endpointOf(ctx, input.endpoint_id);
  const type = (input.eventType ?? endpoint.eventTypes[0] ?? 'task.created') as EventType;
  const eventId = newId('event');
  const payload = {
    id: eventId,
    type,
    occurredAt: ctx.now.toISOString(),
    clientId: endpoint.clientId,
    subjectId: newId('sample'),
    data: { test: true, description: 'A sample event sent by webhooks.endpoint.test; it is not in the feed.' },
  };
  const [row] = await ctx.db
    .insert(webhookDeliveries)
    .values({ id: newId('webhookDelivery'), endpointId: endpoint.id, eventId, eventType: type, payload, status: 'pending', test: true, nextAttemptAt: null, createdAt: ctx.now })
    .returning();
  const secrets = await validSecrets(ctx.db, endpoint.id, ctx.now);
  // The delivery is committed pending; the POST leaves after the commit, so an endpoint that never
  // answers holds no transaction (and no tenant's events) while it is awaited. A dry run never sends:
  // its plan shows the delivery that would be attempted.
  ctx.afterCommit<WebhookDelivery>(async (_committed, db) => {
    const outcome = await send(endpoint.url, eventId, payload, secrets);
    return toDelivery(await db.transaction((tx) => recordAttempt(tx as typeof db, row!, outcome, ctx.now, false)));
  });
  return toDelivery(row!);
}

async function replay(input: { endpoint_id: string; delivery_id: string }, ctx: HandlerContext): Promise<WebhookDelivery> {
  const endpoint = await endpointOf(ctx, input.endpoint_id);
  const [row] = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, input.delivery_id), eq(webhookDeliveries.endpointId, endpoint.id)));
  if (!row) throw notFound('Webhook delivery');
  if (row.status === 'pending') throw invalidTransition('The delivery is still pending; replay a succeeded or failed one.');
  const [updated] = await ctx.db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: ctx.now, lockedUntil: null })
    .where(eq(webhookDeliveries.id, row.id))
    .returning();
  return toDelivery(updated!);
}

export const webhooksHandlers = {
  'webhooks.endpoints.list': endpointsList,
  'webhooks.endpoints.get': endpointsGet,
  'webhooks.deliveries.list': deliveriesList,
  'webhooks.endpoint.create': create,
  'webhooks.endpoint.update': update,
  'webhooks.endpoint.delete': remove,
  'webhooks.endpoint.rotate_secret': rotateSecret,
  'webhooks.endpoint.test': test,
  'webhooks.delivery.replay': replay,
} satisfies WebhooksHandlers;


