// What a handler body receives. Handlers are typed by generated/handlers/<family>.ts, which
// import these types; everything a handler must not re-implement (auth, scopes, validation,
// tiers, idempotency, dry-run, If-Match presence, audit, headers) happens before it runs.
import type { Db } from './data/client.ts';
import type { approvals } from './data/schema.ts';
import type { Policy } from './auth/policy.ts';
import type { ProblemDocument } from './problem-documents.ts';
import type { Principal } from './auth/principal-type.ts';

export type { Principal };

export interface EventSubject {
  /** Client the event concerns; null for internal records. Used to filter feeds and webhooks. */
  clientId: string | null;
  /** Resource id the event is about. */
  subjectId: string;
}

export interface HandlerContext {
  /** The transaction the operation runs in. Use it for every query (PGlite has one connection). */
  db: Db;
  principal: Principal;
  /** Visibility rules 1-6: every query on client-bound data goes through it. */
  policy: Policy;
  operationId: string;
  requestId: string;
  /** True under Prefer: dry-run: the transaction is rolled back afterwards; skip effects outside the database. */
  dryRun: boolean;
  /** The If-Match ETag (present whenever the operation has ifMatch: required). */
  ifMatch: string | null;
  now: Date;
  baseUrl: string;
  /** Records an event in the outbox (same transaction): feed, SSE and webhooks read it from there. */
  emit(type: string, subject: EventSubject, data: Record<string, unknown>): Promise<void>;
  /**
   * Opens the sealed secrets of an operation's stored result (runtime/auth/secret-fields.ts). Only for the
   * credential that caused them (approvals.get shows a proposer its approved write's answer).
   */
  openSecrets(operationId: string, stored: unknown): unknown;
  /**
   * Runs a proposal's write as its proposer (approvals.approve): the proposer rebuilt from the
   * database now, audience and scope checked again, the input validated again, the handler run in a
   * savepoint of ctx.db (a failure is rolled back and returned, never thrown), audited as its own call.
   */
  runAsProposer(row: ApprovalRow): Promise<ApprovedWriteOutcome>;
  /**
   * Runs `step` after the operation's transaction has committed, outside any transaction: the place for
   * network I/O a write causes (a transaction held across a call to a peer holds back every tenant's
   * events, docs/handlers.md "After commit"). The step gets the committed result and a database handle
   * that is not the transaction (each statement commits on its own; use `db.transaction` for several),
   * and returns the result the caller gets, and a replay of the same Idempotency-Key. Steps run in the
   * order they were added. A dry run never runs them. A step that throws is logged
   * (`after_commit_failed`) and the committed result stands: the write is already acknowledged. Inside an
   * approved write (approvals.approve) the step runs after the approve commits, for its effect only.
   */
  afterCommit<R>(step: AfterCommitStep<R>): void;
}

/** What ctx.afterCommit runs: the committed result in, the caller's result out. */
export type AfterCommitStep<R = unknown> = (committed: R, db: Db) => Promise<R>;

/** A stored proposal (runtime/data/schema.ts approvals). */
export type ApprovalRow = typeof approvals.$inferSelect;

/** What an approved write did: its result, or the problem it failed with. */
export interface ApprovedWriteOutcome {
  ok: boolean;
  result?: unknown;
  problem?: ProblemDocument;
}

export type Handler<I, O> = (input: I, ctx: HandlerContext) => Promise<O>;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
