// campaigns.*: messages sent to a client's members. Client scope (rule 5) for reads and sends.
// campaigns.propose_send is Tier 2 and open world: the body runs only once a person approves (the
// pre-flight and dry runs roll back), and even then it sends nothing itself. It records an
// Operation of kind campaign_send and queues one outbound message per recipient in the outbox;
// the delivery loop (runtime/events/outbox.ts, on when SVC_SMTP_URL is set) sends them after commit and
// marks the campaign sent.
import { and, eq, getTableColumns, inArray, lte, sql, type SQL } from 'drizzle-orm';
import { operations, outboundMessages } from '../runtime/data/schema.ts';
import { campaignMessages, campaignRecipients, campaigns } from './data/schema.ts';
import type { SubjectLoader } from '../runtime/pipeline/approval-subjects.ts';
import type { OutboxHooks } from '../runtime/events/outbox.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound, ProblemError } from '../runtime/problem-error.ts';
import { toCampaign, type Campaign, type CampaignRow } from './mappers/crm.ts';
import { actorName, invalidTransition } from './shared.ts';
import type { CampaignsHandlers } from '../generated/handlers/campaigns.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];

/** Loads an approval's `campaign` subject: its client (handlers/index.ts hands it to the registry). */
export const campaignSubject: SubjectLoader = async (db, id) => {
  const [row] = await db.select({ clientId: campaigns.clientId }).from(campaigns).where(eq(campaigns.id, id)).limit(1);
  return row;
};

// Qualified by hand: drizzle renders bare column names inside a select list, which the subquery
// would resolve against campaign_recipients.
const audienceSize = sql<number>`(select count(*)::int from campaign_recipients r where r.campaign_id = "campaigns"."id")`;

async function visibleCampaign(ctx: HandlerContext, id: string): Promise<CampaignRow & { audienceSize: number }> {
  const [row] = await ctx.db
    .select({ ...getTableColumns(campaigns), audienceSize })
    .from(campaigns)
    .where(eq(campaigns.id, id));
  if (!row || !ctx.policy.canReadClient(row.clientId)) throw notFound('Campaign');
  return row;
}

async function list(input: Schemas['CampaignsListInput'], ctx: HandlerContext): Promise<Page<Campaign>> {
  const { clientId, status } = input;
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const page = await startPage(ctx.db, input, 'campaigns.list', { clientId, status });
  const filters: (SQL | undefined)[] = [
    ctx.policy.clientWhere(campaigns.clientId),
    clientId !== undefined ? eq(campaigns.clientId, clientId) : undefined,
    status !== undefined ? eq(campaigns.status, status) : undefined,
    page.after(campaigns.createdAt, campaigns.id),
  ];
  const rows = await ctx.db
    .select({ ...getTableColumns(campaigns), audienceSize, pageKey: pageKeyColumn(campaigns.createdAt) })
    .from(campaigns)
    .where(and(...filters))
    .orderBy(...page.orderBy(campaigns.createdAt, campaigns.id))
    .limit(page.fetch);
  return page.finish(rows, (r) => toCampaign(r, Number(r.audienceSize)));
}

/** Tier 2, run as the proposer once approved: draft -> scheduled (future scheduledAt) or sending. */
async function proposeSend(input: Schemas['CampaignsProposeSendInput'], ctx: HandlerContext): Promise<Campaign> {
  const current = await visibleCampaign(ctx, input.campaign_id);
  if (current.status !== 'draft') throw invalidTransition(`Only a draft campaign can be sent; this one is ${current.status}.`);
  const at = input.scheduledAt !== undefined ? new Date(input.scheduledAt) : null;
  const scheduled = at !== null && at.getTime() > ctx.now.getTime();
  const operationId = newId('operation');
  await ctx.db.insert(operations).values({
    id: operationId,
    kind: 'campaign_send',
    status: scheduled ? 'queued' : 'running',
    progress: 0,
    requestedByKind: ctx.principal.kind,
    requestedById: ctx.principal.id,
    requestedByName: await actorName(ctx.db, ctx.principal.id),
    requestedByCredentialId: ctx.principal.credentialId,
    subjectId: current.id,
    result: null,
    error: null,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  });
  const recipients = await ctx.db.select().from(campaignRecipients).where(eq(campaignRecipients.campaignId, current.id));
  if (recipients.length > 0) {
    const ids = recipients.map(() => newId('msg'));
    await ctx.db.insert(outboundMessages).values(
      recipients.map((r, i) => ({
        id: ids[i]!,
        operationId,
        channel: current.channel,
        recipient: r.address,
        subject: current.subject || current.name,
        body: current.body,
        status: 'queued' as const,
        notBefore: scheduled ? at! : ctx.now,
        createdAt: ctx.now,
      })),
    );
    await ctx.db.insert(campaignMessages).values(ids.map((messageId) => ({ messageId, campaignId: current.id })));
  }
  const [row] = await ctx.db
    .update(campaigns)
    .set({
      status: scheduled ? 'scheduled' : 'sending',
      scheduledAt: at ?? null,
      operationId,
      updatedAt: ctx.now,
      version: sql`${campaigns.version} + 1`,
    })
    .where(and(eq(campaigns.id, current.id), eq(campaigns.status, 'draft')))
    .returning();
  if (!row) throw new ProblemError('conflict', 'The campaign changed while sending it; read it again.');
  return toCampaign(row, current.audienceSize);
}

export const campaignsHandlers = {
  'campaigns.list': list,
  'campaigns.propose_send': proposeSend,
} satisfies CampaignsHandlers;

/**
 * A campaign follows its sends through the runtime's outbox (runtime/events/outbox.ts, handed over in
 * Registry.outbox): a scheduled campaign whose time came becomes sending (and its campaign_send
 * operation running); once every message of its operation is out, it is sent.
 */
export const campaignOutbox: OutboxHooks = {
  async settling(db, now) {
    await db
      .update(campaigns)
      .set({ status: 'sending', updatedAt: now, version: sql`${campaigns.version} + 1` })
      .where(and(eq(campaigns.status, 'scheduled'), lte(campaigns.scheduledAt, now)));
    await db
      .update(operations)
      .set({ status: 'running', updatedAt: now })
      .where(and(eq(operations.kind, 'campaign_send'), eq(operations.status, 'queued'), sql`exists (select 1 from campaigns c where c.operation_id = "operations"."id" and c.status = 'sending')`));
  },
  async operationDone(tx, operationId, now) {
    await tx
      .update(campaigns)
      .set({ status: 'sent', sentAt: now, updatedAt: now, version: sql`${campaigns.version} + 1` })
      .where(and(eq(campaigns.operationId, operationId), inArray(campaigns.status, ['sending', 'scheduled'])));
  },
};
