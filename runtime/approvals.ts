// Tier 2 and Tier 3 proposals and the people's decisions on them.
//
// - A Tier 2/3 command does not run: the pipeline stores an approval holding the validated input and
//   answers 202 {outcome:'proposed', approval}.
// - approvals.approve / approvals.reject (handlers/approvals.ts) decide. People only: a principal
//   signed in with OAuth, never an API key (403 forbidden), never the proposer (403 forbidden), and
//   a person decides a proposal at most once (409 invalid_transition). Tier 2 needs one approval,
//   Tier 3 two distinct approvers. One reject ends it. A proposal that is not pending, or has
//   passed expiresAt (limits.approvalExpiryHours), answers 409 invalid_transition.
// - On the last needed approval the proposed write runs AS THE PROPOSER, its principal rebuilt from
//   the database at that moment (credential still valid, live role, grants) and its audience and
//   scope checked again. It runs in a savepoint: its result (status approved) or its problem
//   (status failed, write rolled back) is stored on the approval; approval.approved is emitted
//   either way (the write was granted), approval.rejected on a reject.
// - Visibility: a caller sees the proposals it made, and those whose client is in its reach
//   (internal proposals, clientId null, are seen by operators).
import { and, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { OperationDef } from './contract-types.ts';
import type { Db } from './db/client.ts';
import { apiKeys, approvals, oauthClients, oauthGrants, users } from './db/schema.ts';
import { keyExpiresAt, keyPrincipal, loadOwner, oauthPrincipal } from './auth/principal.ts';
import type { HandlerContext, Principal } from './handler-types.ts';
import { newId } from './ids.ts';
import { resolveSubject } from './approval-subjects.ts';
import { pageKeyColumn, startPage, type PageResult } from './paging.ts';
import { ProblemError, notFound } from './problem-error.ts';
import { problemBody, type ProblemDocument } from './problems.ts';
import { withoutSealed } from './secret-fields.ts';

export type ApprovalRow = typeof approvals.$inferSelect;

export interface ActorRef {
  kind: Principal['kind'];
  id: string;
  name: string | null;
}

export interface ApprovalDecision {
  approver: ActorRef;
  decision: 'approve' | 'reject';
  comment: string | null;
  decidedAt: string;
}

/** The contract's Approval shape. */
export interface ApprovalView {
  id: string;
  operationId: string;
  tier: number;
  status: 'pending' | 'approved' | 'rejected' | 'expired' | 'failed';
  proposer: ActorRef;
  input: Record<string, unknown>;
  requiredApprovals: number;
  decisions: ApprovalDecision[];
  result: Record<string, unknown> | null;
  error: ProblemDocument | null;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
  pollUrl: string;
}

export function pollUrlOf(id: string): string {
  return `/v1/approvals/${id}`;
}

/**
 * The contract's Approval. An approved write's result is stored with its bearer secrets sealed
 * (runtime/secret-fields.ts); this view removes them. approvalViewFor opens them for the proposing
 * credential, the one that caused them.
 */
export function approvalView(row: ApprovalRow, now = new Date()): ApprovalView {
  const expired = row.status === 'pending' && row.expiresAt.getTime() <= now.getTime();
  const result = withoutSealed(row.result) as Record<string, unknown> | null;
  return {
    id: row.id,
    operationId: row.operationId,
    tier: row.tier,
    status: (expired ? 'expired' : row.status) as ApprovalView['status'],
    proposer: { kind: row.proposerKind as Principal['kind'], id: row.proposerId, name: row.proposerName ?? null },
    input: row.input as Record<string, unknown>,
    requiredApprovals: row.requiredApprovals,
    decisions: (row.decisions as ApprovalDecision[]) ?? [],
    result: result && typeof result === 'object' && !Array.isArray(result) ? result : result === null ? null : { value: result },
    error: (row.error as ProblemDocument | null) ?? null,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    decidedAt: row.decidedAt ? row.decidedAt.toISOString() : null,
    pollUrl: pollUrlOf(row.id),
  };
}

/** The Approval as ctx's caller may see it: the proposing credential gets the approved write's secrets. */
export function approvalViewFor(row: ApprovalRow, ctx: Pick<HandlerContext, 'principal' | 'now' | 'openSecrets'>): ApprovalView {
  const view = approvalView(row, ctx.now);
  if (row.result === null || row.proposerCredentialId !== ctx.principal.credentialId) return view;
  return { ...view, result: ctx.openSecrets(row.operationId, row.result) as Record<string, unknown> };
}

async function nameOf(db: Db, userId: string): Promise<string | null> {
  const [u] = await db.select({ name: users.name }).from(users).where(eq(users.id, userId)).limit(1);
  return u?.name ?? null;
}

export interface ProposeOptions {
  op: OperationDef;
  input: Record<string, unknown>;
  principal: Principal;
  expiryHours: number;
  now: Date;
}

/** Stores a proposal for a Tier 2/3 command (in the caller's transaction). */
export async function proposeApproval(db: Db, o: ProposeOptions): Promise<ApprovalRow> {
  if (o.op.tier !== 2 && o.op.tier !== 3) throw new Error(`proposeApproval: ${o.op.id} is not Tier 2 or 3`);
  const subject = await resolveSubject(db, o.op, o.input);
  const clientId = subject?.clientId ?? null;
  const [row] = await db
    .insert(approvals)
    .values({
      id: newId('approval'),
      operationId: o.op.id,
      tier: o.op.tier,
      status: 'pending',
      clientId,
      subjectType: subject?.type ?? null,
      subjectId: subject?.id ?? null,
      proposerKind: o.principal.kind,
      proposerId: o.principal.id,
      proposerName: await nameOf(db, o.principal.id),
      proposerCredentialId: o.principal.credentialId,
      proposerLoginMethod: o.principal.loginMethod,
      input: o.input,
      requiredApprovals: o.op.tier === 3 ? 2 : 1,
      decisions: [],
      createdAt: o.now,
      expiresAt: new Date(o.now.getTime() + o.expiryHours * 3600_000),
    })
    .returning();
  return row!;
}

// ---------------------------------------------------------------------------------------------
// Visibility

// An approval is visible to the credential that proposed it (not to its user's other credentials:
// a key bound to Acme never sees its owner's Globex proposals) and to people (OAuth sign-ins) with
// reach over the subject's client; an internal subject (no client) only to operators in person.

function isPerson(principal: Principal): boolean {
  return principal.loginMethod === 'oauth';
}

function reaches(principal: Principal, clientId: string | null): boolean {
  if (clientId === null) return principal.kind === 'operator';
  return principal.clientScope.all || principal.clientScope.clientIds.includes(clientId);
}

export function approvalVisibleTo(row: Pick<ApprovalRow, 'proposerCredentialId' | 'clientId'>, principal: Principal): boolean {
  if (row.proposerCredentialId === principal.credentialId) return true;
  return isPerson(principal) && reaches(principal, row.clientId);
}

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
// The runtime the approvals handlers need from the pipeline (attached to the handler context).

export interface ApprovedWriteOutcome {
  ok: boolean;
  result?: unknown;
  problem?: ProblemDocument;
}

export interface ApprovalRuntime {
  /** Runs the approved write as the proposer in a savepoint of db; never throws a ProblemError. */
  runProposed(db: Db, row: ApprovalRow, ctx: HandlerContext): Promise<ApprovedWriteOutcome>;
}

export const APPROVAL_RUNTIME: unique symbol = Symbol.for('svc.approvalRuntime');

export function approvalRuntimeOf(ctx: HandlerContext): ApprovalRuntime {
  const runtime = (ctx as unknown as { [APPROVAL_RUNTIME]?: ApprovalRuntime })[APPROVAL_RUNTIME];
  if (!runtime) throw new Error('approvals: the handler context carries no approval runtime');
  return runtime;
}

export function attachApprovalRuntime(ctx: HandlerContext, runtime: ApprovalRuntime): HandlerContext {
  Object.defineProperty(ctx, APPROVAL_RUNTIME, { value: runtime, enumerable: false });
  return ctx;
}

// ---------------------------------------------------------------------------------------------
// Operations (handlers/approvals.ts delegates here)

export interface ListInput {
  status?: string;
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
  return page.finish(rows, (r) => approvalViewFor(r.row, ctx));
}

async function loadVisible(db: Db, id: string, principal: Principal, forUpdate = false): Promise<ApprovalRow> {
  const q = db.select().from(approvals).where(eq(approvals.id, id)).limit(1);
  const [row] = forUpdate ? await q.for('update') : await q;
  if (!row || !approvalVisibleTo(row, principal)) throw notFound('Approval');
  return row;
}

export async function getApproval(input: { approval_id: string }, ctx: HandlerContext): Promise<ApprovalView> {
  return approvalViewFor(await loadVisible(ctx.db, input.approval_id, ctx.principal), ctx);
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
  const decisions = (row.decisions as ApprovalDecision[]) ?? [];
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
  const decisions = [...((row.decisions as ApprovalDecision[]) ?? []), await decision(db, principal, 'approve', input.comment, now)];
  const approvedBy = new Set(decisions.filter((d) => d.decision === 'approve').map((d) => d.approver.id));
  if (approvedBy.size < row.requiredApprovals) {
    const [updated] = await db
      .update(approvals)
      .set({ decisions, version: sql`${approvals.version} + 1` })
      .where(eq(approvals.id, row.id))
      .returning();
    return approvalView(updated!, now);
  }
  const outcome = await approvalRuntimeOf(ctx).runProposed(db, { ...row, decisions }, ctx);
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
  return view;
}

export async function rejectApproval(input: { approval_id: string; comment?: string }, ctx: HandlerContext): Promise<ApprovalView> {
  const { db, principal, now } = ctx;
  const row = await loadVisible(db, input.approval_id, principal, true);
  await checkDecider(db, row, principal, now);
  const decisions = [...((row.decisions as ApprovalDecision[]) ?? []), await decision(db, principal, 'reject', input.comment, now)];
  const [updated] = await db
    .update(approvals)
    .set({ decisions, status: 'rejected', decidedAt: now, version: sql`${approvals.version} + 1` })
    .where(eq(approvals.id, row.id))
    .returning();
  const view = approvalView(updated!, now);
  await ctx.emit('approval.rejected', { clientId: row.clientId, subjectId: row.id }, { ...view });
  return view;
}

// ---------------------------------------------------------------------------------------------
// The proposer, rebuilt at approval time by the authenticator's rules (runtime/auth/authenticate.ts):
// the credential must still be valid, effective scopes = granted ∩ live role.

export interface RebuildOptions {
  scopes: readonly string[];
  roleScopes: Record<string, readonly string[]>;
  oauthClientMode: 'open' | 'allowlist';
  now: Date;
}

function refused(detail: string): ProblemError {
  return new ProblemError('forbidden', `The proposer can no longer make this write: ${detail}`);
}

export async function rebuildProposer(db: Db, row: ApprovalRow, o: RebuildOptions): Promise<Principal> {
  const rules = { scopes: o.scopes, roleScopes: o.roleScopes };
  const owner = await loadOwner(db, row.proposerId);
  if (!owner || owner.disabled) throw refused('the account is missing or disabled.');

  if (row.proposerLoginMethod === 'api_key') {
    const [key] = await db.select().from(apiKeys).where(eq(apiKeys.id, row.proposerCredentialId)).limit(1);
    if (!key || key.ownerUserId !== owner.id) throw refused('its API key is gone.');
    if (key.revokedAt) throw refused('its API key was revoked.');
    if (keyExpiresAt(key) <= o.now.getTime()) throw refused('its API key expired.');
    if (owner.kind !== 'operator') throw refused('the key owner is not an operator.');
    return keyPrincipal(owner, key, rules);
  }

  const [grant] = await db.select().from(oauthGrants).where(eq(oauthGrants.id, row.proposerCredentialId)).limit(1);
  if (!grant || grant.userId !== owner.id || grant.revokedAt) throw refused('its OAuth grant was revoked.');
  const grants = await db
    .select({ scopes: oauthGrants.scopes })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.userId, owner.id), eq(oauthGrants.oauthClientId, grant.oauthClientId), isNull(oauthGrants.revokedAt)));
  let granted = new Set(grants.flatMap((g) => g.scopes));
  if (o.oauthClientMode === 'allowlist') {
    const [client] = await db.select().from(oauthClients).where(eq(oauthClients.id, grant.oauthClientId)).limit(1);
    if (!client?.allowlisted) throw refused('its OAuth client is not allowlisted.');
    granted = new Set([...granted].filter((s) => client.scopeCeiling.includes(s)));
  }
  return oauthPrincipal(owner, { credentialId: grant.id, oauthClientId: grant.oauthClientId, granted }, rules);
}

/** A ProblemError -> the document stored on a failed approval. */
export function storedProblem(err: unknown, requestId: string, baseUrl: string, approvalId: string): ProblemDocument {
  return problemBody(err, pollUrlOf(approvalId), requestId, baseUrl);
}
