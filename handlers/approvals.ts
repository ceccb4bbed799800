// approvals.list / get / approve / reject: people decide Tier 2/3 proposals. The rules: people only
// (OAuth sign-ins, never an API key), never the proposer, a person decides once, Tier 3 needs two
// distinct approvers, one reject ends it, a lapsed proposal is expired; on the last approval the
// write runs as its proposer (ctx.runAsProposer). Proposing, the Approval view, visibility and the
// proposer's rebuild are the pipeline's (runtime/pipeline/approvals.ts).
import { and, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { ApprovalsHandlers } from '../generated/handlers/approvals.ts';
import type { Db } from '../runtime/data/client.ts';
import { approvals } from '../runtime/data/schema.ts';
import type { HandlerContext, Principal } from '../runtime/handler-types.ts';
import {
  approvalView,
  approvalVisibleTo,
  isPerson,
  nameOf,
  reaches,
  type ApprovalDecision,
  type ApprovalRow,
  type ApprovalView,
} from '../runtime/pipeline/approvals.ts';
import { pageKeyColumn, startPage, type PageResult } from '../runtime/data/paging.ts';
import { hasSealed, withoutSealed } from '../runtime/auth/secret-fields.ts';
import { ProblemError, notFound } from '../runtime/problem-error.ts';
import type { ApprovalStatus } from '../generated/contract.ts';
import { notify } from '../runtime/events/notifications.ts';

/** approval_decided to the proposer (once the proposal is decided for good). */
async function notifyDecided(ctx: HandlerContext, row: ApprovalRow, view: ApprovalView): Promise<void> {
  await notify(
    ctx.db,
    [row.proposerId],
    {
      kind: 'approval_decided',
      title: `Your proposal ${row.operationId} was ${view.status}`,
      body: view.status === 'failed' ? 'It was approved, but the write failed; the approval holds the problem.' : '',
      clientId: row.clientId,
      subjectId: row.id,
      path: view.pollUrl,
    },
    { now: ctx.now, actorId: ctx.principal.id },
  );
}

// ---------------------------------------------------------------------------------------------
// Visibility (the rule itself: approvalVisibleTo in runtime/pipeline/approvals.ts; this is its SQL form)

function visibilityWhere(principal: Principal): SQL | undefined {
  const mine = eq(approvals.proposerCredentialId, principal.credentialId);
  if (!isPerson(principal)) return mine;
  if (principal.kind === 'operator' && principal.clientScope.all) return undefined;
  const ids = [...principal.clientScope.clientIds];
  const inReach = ids.length > 0 ? sql`${approvals.clientId} in (${sql.join(ids.map((id) => sql`${id}`), sql`, `)})` : sql`false`;
  const internal = principal.kind === 'operator' ? isNull(approvals.clientId) : sql`false`;
  return or(mine, inReach, internal);
}

// ---------------------------------------------------------------------------------------------
// Operations

export interface ListInput {
  status?: ApprovalStatus;
  operationId?: string;
  cursor?: string;
  pageSize?: number;
}

export async function listApprovals(input: ListInput, ctx: HandlerContext): Promise<PageResult<ApprovalView>> {
  const filters = { status: input.status ?? null, operationId: input.operationId ?? null };
  const page = await startPage(ctx.db, input, 'approvals.list', filters);
  const nowIso = ctx.now.toISOString();
  let statusWhere: SQL | undefined;
  if (input.status === 'expired') {
    statusWhere = or(eq(approvals.status, 'expired'), and(eq(approvals.status, 'pending'), sql`${approvals.expiresAt} <= ${nowIso}::timestamptz`));
  } else if (input.status === 'pending') {
    statusWhere = and(eq(approvals.status, 'pending'), sql`${approvals.expiresAt} > ${nowIso}::timestamptz`);
  } else if (input.status) {
    statusWhere = eq(approvals.status, input.status);
  }
  const rows = await ctx.db
    .select({ row: approvals, id: approvals.id, pageKey: pageKeyColumn(approvals.createdAt) })
    .from(approvals)
    .where(
      and(
        visibilityWhere(ctx.principal),
        statusWhere,
        input.operationId ? eq(approvals.operationId, input.operationId) : undefined,
        page.after(approvals.createdAt, approvals.id),
      ),
    )
    .orderBy(...page.orderBy(approvals.createdAt, approvals.id))
    .limit(page.fetch);
  return page.finish(rows, (r) => approvalView(r.row, ctx.now));
}

async function loadVisible(db: Db, id: string, principal: Principal, forUpdate = false): Promise<ApprovalRow> {
  const q = db.select().from(approvals).where(eq(approvals.id, id)).limit(1);
  const [row] = forUpdate ? await q.for('update') : await q;
  if (!row || !approvalVisibleTo(row, principal)) throw notFound('Approval');
  return row;
}

/**
 * An approved write's bearer secret (keys.create, keys.rotate) is shown once: to the proposing
 * credential, on its first approvals.get after the approval. That read takes the sealed secret off
 * the row in the same transaction (a concurrent second read finds it gone), so it is never shown
 * again, to anybody; every other view (lists, other credentials, events) never had it.
 */
export async function getApproval(input: { approval_id: string }, ctx: HandlerContext): Promise<ApprovalView> {
  const row = await loadVisible(ctx.db, input.approval_id, ctx.principal);
  if (row.proposerCredentialId !== ctx.principal.credentialId || !hasSealed(row.result)) return approvalView(row, ctx.now);
  return ctx.db.transaction(async (tx) => {
    const [locked] = await tx.select().from(approvals).where(eq(approvals.id, row.id)).for('update');
    if (!locked || !hasSealed(locked.result)) return approvalView(locked ?? row, ctx.now);
    await tx.update(approvals).set({ result: withoutSealed(locked.result) }).where(eq(approvals.id, row.id));
    return { ...approvalView(locked, ctx.now), result: ctx.openSecrets(locked.operationId, locked.result) as Record<string, unknown> };
  });
}

/** People-only rules shared by approve and reject; also turns a lapsed proposal into expired. */
async function checkDecider(db: Db, row: ApprovalRow, principal: Principal, now: Date): Promise<void> {
  if (principal.loginMethod !== 'oauth') {
    throw new ProblemError('forbidden', 'Proposals are decided by people signed in with OAuth, never with an API key.');
  }
  if (row.proposerId === principal.id) {
    throw new ProblemError('forbidden', 'Nobody may decide a proposal of their own.');
  }
  if (!principal.scopes.has('approvals:decide') || !reaches(principal, row.clientId)) {
    throw new ProblemError('forbidden', "Deciding needs approvals:decide and reach over the proposal's client.");
  }
  if (row.status === 'pending' && row.expiresAt.getTime() <= now.getTime()) {
    await db.update(approvals).set({ status: 'expired', version: sql`${approvals.version} + 1` }).where(eq(approvals.id, row.id));
    throw new ProblemError('invalid_transition', `The proposal expired at ${row.expiresAt.toISOString()}.`);
  }
  if (row.status !== 'pending') {
    throw new ProblemError('invalid_transition', `The proposal is ${row.status}; only a pending proposal can be decided.`);
  }
  const decisions = (row.decisions as ApprovalDecision[] | null) ?? [];
  if (decisions.some((d) => d.approver.id === principal.id)) {
    throw new ProblemError('invalid_transition', 'You have already decided on this proposal; another person must decide.');
  }
}

async function decision(db: Db, principal: Principal, kind: 'approve' | 'reject', comment: string | undefined, now: Date): Promise<ApprovalDecision> {
  return {
    approver: { kind: principal.kind, id: principal.id, name: await nameOf(db, principal.id) },
    decision: kind,
    comment: comment ?? null,
    decidedAt: now.toISOString(),
  };
}

export async function approveApproval(input: { approval_id: string; comment?: string }, ctx: HandlerContext): Promise<ApprovalView> {
  const { db, principal, now } = ctx;
  const row = await loadVisible(db, input.approval_id, principal, true);
  await checkDecider(db, row, principal, now);
  const decisions = [...((row.decisions as ApprovalDecision[] | null) ?? []), await decision(db, principal, 'approve', input.comment, now)];
  const approvedBy = new Set(decisions.filter((d) => d.decision === 'approve').map((d) => d.approver.id));
  if (approvedBy.size < row.requiredApprovals) {
    const [updated] = await db
      .update(approvals)
      .set({ decisions, version: sql`${approvals.version} + 1` })
      .where(eq(approvals.id, row.id))
      .returning();
    return approvalView(updated!, now);
  }
  const outcome = await ctx.runAsProposer({ ...row, decisions });
  const [updated] = await db
    .update(approvals)
    .set({
      decisions,
      status: outcome.ok ? 'approved' : 'failed',
      result: outcome.ok ? ((outcome.result ?? null) as Record<string, unknown> | null) : null,
      error: outcome.ok ? null : (outcome.problem ?? null),
      decidedAt: now,
      version: sql`${approvals.version} + 1`,
    })
    .where(eq(approvals.id, row.id))
    .returning();
  const view = approvalView(updated!, now);
  await ctx.emit('approval.approved', { clientId: row.clientId, subjectId: row.id }, { ...view });
  await notifyDecided(ctx, row, view);
  return view;
}

export async function rejectApproval(input: { approval_id: string; comment?: string }, ctx: HandlerContext): Promise<ApprovalView> {
  const { db, principal, now } = ctx;
  const row = await loadVisible(db, input.approval_id, principal, true);
  await checkDecider(db, row, principal, now);
  const decisions = [...((row.decisions as ApprovalDecision[] | null) ?? []), await decision(db, principal, 'reject', input.comment, now)];
  const [updated] = await db
    .update(approvals)
    .set({ decisions, status: 'rejected', decidedAt: now, version: sql`${approvals.version} + 1` })
    .where(eq(approvals.id, row.id))
    .returning();
  const view = approvalView(updated!, now);
  await ctx.emit('approval.rejected', { clientId: row.clientId, subjectId: row.id }, { ...view });
  await notifyDecided(ctx, row, view);
  return view;
}


export const approvalsHandlers = {
  'approvals.list': listApprovals,
  'approvals.get': getApproval,
  'approvals.approve': approveApproval,
  'approvals.reject': rejectApproval,
} satisfies ApprovalsHandlers;
