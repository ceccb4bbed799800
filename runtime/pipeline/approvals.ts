// Tier 2 and Tier 3 proposals and the people's decisions on them.
//
// - A Tier 2/3 command does not run: the pipeline stores an approval holding the validated input and
//   answers 202 {outcome:'proposed', approval}.
// - approvals.approve / approvals.reject decide; their bodies are in handlers/approvals.ts, which runs
//   the approved write through ctx.runAsProposer (the executor's runProposed). People only: a principal
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
import { and, eq, isNull } from 'drizzle-orm';
import type { OperationDef, PrincipalKind } from '../contract-types.ts';
import type { Db } from '../data/client.ts';
import { apiKeys, approvals, oauthClients, oauthGrants, users, type ApprovalStatus } from '../data/schema.ts';
import { keyExpiresAt, keyPrincipal, loadOwner, oauthPrincipal } from '../auth/principal.ts';
import type { ApprovalRow, ApprovedWriteOutcome, HandlerContext, Principal } from '../handler-types.ts';
import { newId } from '../data/ids.ts';
import { resolveSubject, type SubjectLoaders } from './approval-subjects.ts';
import { ProblemError } from '../problem-error.ts';
import { problemBody, type ProblemDocument } from '../problem-documents.ts';
import { withoutSealed } from '../auth/secret-fields.ts';
import { approversOf, notify } from '../events/notifications.ts';
import { inSpan } from '../observability/index.ts';

export type { ApprovalRow, ApprovedWriteOutcome };

/** Who acted: a principal's kind and id, and the person's name when known. */
export interface ActorRef {
  id: string;
  kind: PrincipalKind;
  name?: string | null;
}

/** One person's decision on a proposal. */
export interface ApprovalDecision {
  approver: ActorRef;
  comment: string | null;
  decidedAt: string;
  decision: 'approve' | 'reject';
}

/** A proposal as the runtime shows it (the contract's Approval schema; the runtime owns the machinery). */
export interface ApprovalView {
  id: string;
  operationId: string;
  tier: number;
  status: ApprovalStatus;
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
 * (runtime/auth/secret-fields.ts); this view removes them. approvals.get shows them once, to the
 * proposing credential (handlers/approvals.ts).
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

export async function nameOf(db: Db, userId: string): Promise<string | null> {
  const [u] = await db.select({ name: users.name }).from(users).where(eq(users.id, userId)).limit(1);
  return u?.name ?? null;
}

export interface ProposeOptions {
  op: OperationDef;
  input: Record<string, unknown>;
  principal: Principal;
  expiryHours: number;
  now: Date;
  /** The API's approval-subject loaders by resource type (Registry.approvalSubjects). */
  subjects?: SubjectLoaders;
}

/** Stores a proposal for a Tier 2/3 command (in the caller's transaction); a span of its own when tracing is on. */
export function proposeApproval(db: Db, o: ProposeOptions): Promise<ApprovalRow> {
  return inSpan('svc.approval.create', { 'svc.operation': o.op.id, 'svc.approval.tier': o.op.tier ?? 0 }, () => insertProposal(db, o));
}

async function insertProposal(db: Db, o: ProposeOptions): Promise<ApprovalRow> {
  if (o.op.tier !== 2 && o.op.tier !== 3) throw new Error(`proposeApproval: ${o.op.id} is not Tier 2 or 3`);
  const subject = await resolveSubject(db, o.op, o.input, o.subjects);
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
  // approval_requested, in the same transaction: to each person who could decide it.
  await notify(
    db,
    await approversOf(db, clientId, o.principal.id),
    {
      kind: 'approval_requested',
      title: `Approval requested: ${o.op.id}`,
      body: `${row!.proposerName ?? 'Someone'} proposed ${o.op.id}${subject?.id ? ` on ${subject.id}` : ''}; it waits for your decision.`,
      clientId,
      subjectId: row!.id,
      path: pollUrlOf(row!.id),
    },
    { now: o.now, actorId: o.principal.id },
  );
  return row!;
}

// ---------------------------------------------------------------------------------------------
// Visibility

// An approval is visible to the credential that proposed it (not to its user's other credentials:
// a key bound to one client never sees what its owner proposed with a key bound to another) and to people (OAuth sign-ins) with
// reach over the subject's client; an internal subject (no client) only to operators in person.

export function isPerson(principal: Principal): boolean {
  return principal.loginMethod === 'oauth';
}

export function reaches(principal: Principal, clientId: string | null): boolean {
  if (clientId === null) return principal.kind === 'operator';
  return principal.clientScope.all || principal.clientScope.clientIds.includes(clientId);
}

export function approvalVisibleTo(row: Pick<ApprovalRow, 'proposerCredentialId' | 'clientId'>, principal: Principal): boolean {
  if (row.proposerCredentialId === principal.credentialId) return true;
  return isPerson(principal) && reaches(principal, row.clientId);
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
