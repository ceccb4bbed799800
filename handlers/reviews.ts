// reviews.*: deliverables checked by the team before they are released to the client.
// Visibility: the client scope (rule 5), and a client admin sees released reviews only (a draft or
// ready review is 404 to it). Service accounts and operators see every status in their reach.
import { and, eq, getTableColumns, sql, type SQL } from 'drizzle-orm';
import { reviews } from './data/schema.ts';
import type { SubjectLoader } from '../runtime/pipeline/approval-subjects.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound } from '../runtime/problem-error.ts';
import { toReview, type Review, type ReviewRow } from './mappers/crm.ts';
import { actorName, invalidTransition } from './shared.ts';
import type { ReviewsHandlers } from '../generated/handlers/reviews.ts';
import type { components } from '../generated/types.ts';
import { clientAdminsHolding, notify } from '../runtime/events/notifications.ts';

type Schemas = components['schemas'];

/** Loads an approval's `review` subject: its client (handlers/index.ts hands it to the registry). */
export const reviewSubject: SubjectLoader = async (db, id) => {
  const [row] = await db.select({ clientId: reviews.clientId }).from(reviews).where(eq(reviews.id, id)).limit(1);
  return row;
};

function releasedOnly(ctx: HandlerContext): boolean {
  return ctx.principal.kind === 'client_admin';
}

async function visibleReview(ctx: HandlerContext, id: string): Promise<ReviewRow> {
  const [row] = await ctx.db.select().from(reviews).where(eq(reviews.id, id));
  if (!row || !ctx.policy.canReadClient(row.clientId)) throw notFound('Review');
  if (releasedOnly(ctx) && row.status !== 'released') throw notFound('Review');
  return row;
}

async function list(input: Schemas['ReviewsListInput'], ctx: HandlerContext): Promise<Page<Review>> {
  const { clientId, projectId, status } = input;
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const page = await startPage(ctx.db, input, 'reviews.list', { clientId, projectId, status });
  const filters: (SQL | undefined)[] = [
    ctx.policy.clientWhere(reviews.clientId),
    releasedOnly(ctx) ? eq(reviews.status, 'released') : undefined,
    clientId !== undefined ? eq(reviews.clientId, clientId) : undefined,
    projectId !== undefined ? eq(reviews.projectId, projectId) : undefined,
    status !== undefined ? eq(reviews.status, status) : undefined,
    page.after(reviews.createdAt, reviews.id),
  ];
  const rows = await ctx.db
    .select({ ...getTableColumns(reviews), pageKey: pageKeyColumn(reviews.createdAt) })
    .from(reviews)
    .where(and(...filters))
    .orderBy(...page.orderBy(reviews.createdAt, reviews.id))
    .limit(page.fetch);
  return page.finish(rows, toReview);
}

async function get(input: { review_id: string }, ctx: HandlerContext): Promise<Review> {
  return toReview(await visibleReview(ctx, input.review_id));
}

/** Tier 2, run as the proposer once approved: ready -> released; released stays as it is, silently. */
async function release(input: { review_id: string; note?: string }, ctx: HandlerContext): Promise<Review> {
  const current = await visibleReview(ctx, input.review_id);
  if (current.status === 'released') return toReview(current);
  if (current.status !== 'ready') throw invalidTransition(`Only a ready review can be released; this one is ${current.status}.`);
  const [row] = await ctx.db
    .update(reviews)
    .set({
      status: 'released',
      releaseNote: input.note ?? null,
      releasedAt: ctx.now,
      releasedByKind: ctx.principal.kind,
      releasedById: ctx.principal.id,
      releasedByName: await actorName(ctx.db, ctx.principal.id),
      updatedAt: ctx.now,
      version: sql`${reviews.version} + 1`,
    })
    .where(and(eq(reviews.id, current.id), eq(reviews.status, 'ready')))
    .returning();
  if (!row) {
    // Released (or moved) concurrently: report what it is now.
    const now = await visibleReview(ctx, current.id);
    if (now.status === 'released') return toReview(now);
    throw invalidTransition(`Only a ready review can be released; this one is ${now.status}.`);
  }
  const review = toReview(row);
  await ctx.emit('review.released', { clientId: review.clientId, subjectId: review.id }, review);
  // review_released to the client's admins who read reviews (in this transaction).
  await notify(
    ctx.db,
    await clientAdminsHolding(ctx.db, review.clientId, 'reviews:read'),
    {
      kind: 'review_released',
      title: `Released: ${review.title}`,
      body: input.note ?? '',
      clientId: review.clientId,
      subjectId: review.id,
      path: `/v1/reviews/${review.id}`,
    },
    { now: ctx.now, actorId: ctx.principal.id },
  );
  return review;
}

export const reviewsHandlers = {
  'reviews.list': list,
  'reviews.get': get,
  'reviews.release': release,
} satisfies ReviewsHandlers;
