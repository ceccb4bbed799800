// The one pipeline both transports call (after authentication and the rate limit, which happen in
// the transport because they need the HTTP request):
//
//   write switch and feature flags -> operation audience + scope -> input validation -> idempotency key checks ->
//   If-Match presence -> dry-run | (idempotency claim -> tier: proposal | handler in a
//   transaction with ctx.emit) -> audit -> CallResult
//
// Departure from the brief's literal order (tier before idempotency): the idempotency claim wraps
// the proposal too, so a retried Tier 2 request with the same key replays the first 202 instead of
// filing a second proposal. A dry run stores no idempotency record (it writes nothing), but the
// If-Match rules are checked (a dry run needs no idempotency key: it writes nothing), so a plan says what the real request would answer.
import type { OperationDef, RuntimeService } from '../contract-types.ts';
import type { Config } from '../config.ts';
import type { Database, Db } from '../data/client.ts';
import type { AfterCommitStep, Handler, HandlerContext, Principal } from '../handler-types.ts';
import { Policy } from '../auth/policy.ts';
import { ProblemError } from '../problem-error.ts';
import { isProblemCode, isUnexpected, problemStatus, toProblemError } from '../problem-documents.ts';
import { auditEntry, auditRow, failedWith, type AuditedEnd, type AuditEntry, type Auditor } from './audit.ts';
import { completeWrite } from './completion.ts';
import {
  approvalView,
  proposeApproval,
  rebuildProposer,
  storedProblem,
  type ApprovalRow,
  type ApprovedWriteOutcome,
} from './approvals.ts';
import { createEmitter, scrubEventSecrets, writePending, type EmittedEvent, type PendingEvent } from '../events/events.ts';
import type { SecretFields } from '../auth/secret-fields.ts';
import type { SubjectLoaders } from './approval-subjects.ts';
import {
  abandonIdempotent,
  beginIdempotent,
  claimInTransaction,
  storeProblemAnswer,
  completeIdempotent,
  fingerprint,
  parseIdempotencyKey,
  replaceStoredAnswer,
  type IdempotencyScope,
  type StoredResponse,
} from './idempotency.ts';
import { checkAccess, checkEnabled } from './access.ts';
import { refuseWildcardIfMatch, requireIfMatch } from './etag.ts';
import type { Call, CallResult, Executor, Plan } from './types.ts';
import { fieldErrors, validateInput, type ValidateFn } from './validate.ts';
import { errorSummary, logLine, SafeMessageError, stderrLog } from '../observability/log.ts';
import { metrics } from '../observability/index.ts';

// The executor holds handlers of every operation in one map; their input and output types differ per
// operation and are checked where each family file declares `satisfies <Family>Handlers`.
export type AnyHandler = Handler<any, any>;

export interface PipelineDeps {
  database: Database;
  config: Config;
  service: RuntimeService;
  operationsById: Readonly<Record<string, OperationDef>>;
  validators: Readonly<Record<string, ValidateFn>>;
  /** Result validators by operation id; null: results are not checked (config.validateResponses off). */
  resultValidators?: Readonly<Record<string, ValidateFn>> | null;
  handlers: Readonly<Record<string, AnyHandler>>;
  /** The contract's bearer secrets: removed from previews, sealed in stored answers (runtime/auth/secret-fields.ts). */
  secrets: SecretFields;
  auditor?: Auditor | null;
  /** Rebuilds an approval's proposer at approval time; default: from the database (rebuildProposer). */
  rebuildProposer?: (db: Db, row: ApprovalRow) => Promise<Principal>;
  /** The API's approval-subject loaders (Registry.approvalSubjects). */
  approvalSubjects?: SubjectLoaders;
  now?: () => Date;
  /** Log lines (runtime/observability/log.ts logLine: JSON, never a body or a bound value). Default stderr. */
  log?: (message: string) => void;
}

export interface PipelineExecutor extends Executor {
  /** The approved write of a proposal, as its proposer (used by approvals.approve). */
  runProposed(db: Db, row: ApprovalRow, requestId: string, plan?: ProposedRunMode): Promise<ApprovedWriteOutcome>;
}

/** How an approved write runs: for real, or inside a dry-run approve (rolled back, listed, audited `planned`). */
export interface ProposedRunMode {
  dryRun: boolean;
  /** The events the approved write emits join the calling approve's plan. */
  sink: EmittedEvent[];
  /** The approved write's after-commit steps join the approve's, run for their effect once it commits. */
  afterCommit?: AfterCommitStep[];
}

/** Thrown inside a write's transaction when its key already has an answer: the empty transaction ends, the answer replays. */
class Replayed extends Error {
  constructor(readonly response: StoredResponse) {
    super('idempotent replay');
  }
}

class Rollback extends Error {
  constructor(readonly value: unknown) {
    super('dry-run rollback');
  }
}

function etagOf(value: unknown): string | null {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const etag = (value as Record<string, unknown>).etag;
    if (typeof etag === 'string' && etag !== '') return etag;
  }
  return null;
}

export function createExecutor(deps: PipelineDeps): PipelineExecutor {
  const { database, config, service, secrets } = deps;
  const now = deps.now ?? (() => new Date());
  const log = deps.log ?? stderrLog;
  const retentionHours = service.limits.idempotencyRetentionHours;
  const expiryHours = service.limits.approvalExpiryHours;
  const maxDepth = service.limits.maxJsonDepth;
  const rebuild =
    deps.rebuildProposer ??
    ((db: Db, row: ApprovalRow) =>
      rebuildProposer(db, row, {
        scopes: service.scopes,
        roleScopes: service.roleScopes,
        oauthClientMode: config.oauthClientMode,
        now: now(),
      }));

  /** Calls in flight by request id: the approved write's audit row names the approving call's transport. */
  const inflight = new Map<string, Call>();
  /** When each call in flight started (its audit row's duration). */
  const startedAt = new Map<string, number>();
  /** Calls whose audit row was written in their own transaction (the finally block skips them). */
  const auditedInTx = new Set<string>();

  function callEntry(call: Call, end: AuditedEnd): AuditEntry {
    const request = { requestId: call.requestId, transport: call.transport, operationId: call.op.id, toolName: call.toolName, method: call.method, path: call.path };
    return auditEntry(request, call.principal, end, startedAt.get(call.requestId) ?? performance.now());
  }

  /** A command's audit row, in the transaction of its effect (DESIGN.md: an acknowledged write always has one). */
  async function auditInTx(tx: Db, call: Call, answer: CallResult): Promise<void> {
    if (!deps.auditor) return;
    await deps.auditor.recordIn(tx, callEntry(call, { status: answer.status, outcome: answer.outcome, problemCode: null }));
  }

  function handlerOf(op: OperationDef): AnyHandler {
    const handler = deps.handlers[op.id];
    if (typeof handler !== 'function') throw new ProblemError('not_implemented', `The operation ${op.id} is not implemented yet.`);
    return handler;
  }

  /**
   * The handler's result against the contract's output schema, when result validation is on: a
   * mismatch is a bug in the handler, thrown as an unexpected error (logged with the request id,
   * answered 500 internal_error) naming the operation, each JSON pointer and its message.
   */
  function checkResult(op: OperationDef, value: unknown): void {
    if (!deps.resultValidators || op.stream) return;
    const validate = deps.resultValidators[op.id];
    if (!validate) throw new Error(`no result validator for ${op.id}`);
    if (validate(value)) return;
    const found = fieldErrors(validate.errors).map((e) => `${e.pointer || '(result)'}: ${e.message}`);
    throw new SafeMessageError(`the result of ${op.id} does not match the contract: ${found.join('; ')}`);
  }

  function validatorOf(op: OperationDef): ValidateFn {
    const validate = deps.validators[op.id];
    if (!validate) throw new Error(`no validator for ${op.id}`);
    return validate;
  }

  function context(
    db: Db,
    op: OperationDef,
    principal: Principal,
    requestId: string,
    dryRun: boolean,
    ifMatch: string | null,
    sink: EmittedEvent[],
    steps: AfterCommitStep[],
    pending?: PendingEvent[],
  ): HandlerContext {
    const at = now();
    const ctx: HandlerContext = {
      db,
      principal,
      policy: new Policy(principal),
      operationId: op.id,
      requestId,
      dryRun,
      ifMatch,
      now: at,
      baseUrl: config.baseUrl,
      emit: createEmitter({ db, actor: principal, eventTypes: service.eventTypes, now: () => at, sink, pending }),
      runAsProposer: (row) => executor.runProposed(db, row, requestId, { dryRun, sink, afterCommit: steps }),
      openSecrets: (operationId, stored) => secrets.open(operationId, stored),
      afterCommit: (step) => void steps.push(step as AfterCommitStep),
    };
    return ctx;
  }

  /**
   * Runs a write's after-commit steps (HandlerContext.afterCommit) outside any transaction, in order:
   * each gets the result so far and returns the next. One that throws is logged and skipped: the write
   * has committed, so its acknowledged result stands.
   */
  async function afterCommit(op: OperationDef, requestId: string, steps: AfterCommitStep[], committed: unknown): Promise<unknown> {
    let result = committed;
    for (const step of steps) {
      try {
        result = await step(result, database.db);
      } catch (err) {
        log(logLine('error', 'after_commit_failed', { requestId, operationId: op.id, error: errorSummary(err) }));
      }
    }
    if (result !== committed) checkResult(op, result);
    return result;
  }

  /**
   * Runs the handler in one transaction; a dry run rolls it back and returns what it would have returned.
   * `result` is what the caller gets: the committed result as the after-commit steps left it
   * (`changed` when they replaced it, so a stored idempotent answer follows).
   */
  async function runHandler(
    op: OperationDef,
    input: Record<string, unknown>,
    principal: Principal,
    requestId: string,
    ifMatch: string | null,
    dryRun: boolean,
    onCommit?: (tx: Db, result: unknown, pending: PendingEvent[]) => Promise<void>,
    onBegin?: (tx: Db) => Promise<void>,
  ): Promise<{ result: unknown; events: EmittedEvent[]; changed: boolean }> {
    const handler = handlerOf(op);
    const events: EmittedEvent[] = [];
    const steps: AfterCommitStep[] = [];
    const pending: PendingEvent[] = [];
    try {
      const committed = await database.transaction(async (tx) => {
        if (onBegin) await onBegin(tx);
        const value = await handler(input, context(tx, op, principal, requestId, dryRun, ifMatch, events, steps, pending));
        checkResult(op, value);
        await scrubEventSecrets(tx, events, secrets.values(op.id, value));
        if (dryRun) throw new Rollback(value);
        // The events are written before commit: onCommit may take one into its own statement.
        if (onCommit) await onCommit(tx, value, pending);
        await writePending(tx, pending);
        return value;
      });
      metrics.eventsCommitted(events);
      const result = steps.length > 0 ? await afterCommit(op, requestId, steps, committed) : committed;
      return { result, events, changed: result !== committed };
    } catch (err) {
      if (err instanceof Rollback) return { result: err.value, events, changed: false };
      throw err;
    }
  }

  async function plan(op: OperationDef, input: Record<string, unknown>, call: Call): Promise<CallResult> {
    const approvalRequired = op.tier === 2 || op.tier === 3;
    const { result, events } = await runHandler(op, input, call.principal, call.requestId, call.controls.ifMatch, true);
    const effects = approvalRequired
      ? [
          `A Tier ${op.tier} proposal would be filed for ${op.tier === 3 ? 'two approvers' : 'one approver'}; nothing runs until a person approves it.`,
          `On approval: ${op.summary}.`,
        ]
      : [`${op.summary}.`];
    if (secrets.has(op.id)) effects.push('The real call returns its secret once, to the credential that makes it; this preview leaves it out.');
    for (const e of events) effects.push(`Emit ${e.type} for ${e.subjectId}.`);
    const body: Plan = {
      operationId: op.id,
      effects,
      events: [...new Set(events.map((e) => e.type))],
      approvalRequired,
      preview: secrets.strip(op.id, result ?? null),
    };
    return { status: 200, body: { outcome: 'planned', plan: body }, outcome: 'planned', headers: { 'Preference-Applied': 'dry-run' } };
  }

  async function command(op: OperationDef, input: Record<string, unknown>, call: Call): Promise<CallResult> {
    const key = op.idempotency === 'none' ? null : parseIdempotencyKey(call.controls.idempotencyKey);
    // A dry run writes nothing, so it needs no key (a key it is given must still be well formed).
    if (op.idempotency === 'required' && key === null && !call.controls.dryRun) {
      throw new ProblemError(
        'idempotency_key_required',
        call.transport === 'mcp'
          ? `${op.id} needs idempotencyKey: send a new UUID as the idempotencyKey argument, and the same one when you retry this write.`
          : `${op.id} needs an Idempotency-Key header: send a new UUID, and the same one when you retry this write.`,
      );
    }
    if (op.ifMatch === 'required') requireIfMatch(op.id, call.controls.ifMatch);
    else refuseWildcardIfMatch(call.controls.ifMatch);
    if (call.controls.dryRun) return plan(op, input, call);

    const scope: IdempotencyScope | null = key
      ? { credentialId: call.principal.credentialId, operationId: op.id, key, fingerprint: fingerprint(op.id, input) }
      : null;
    if (!scope) return runCommand(op, input, call, null);
    if (op.tier !== 2 && op.tier !== 3) return commandInTransaction(op, input, call, scope);
    const begun = await beginIdempotent(database.db, scope, retentionHours, now());
    if (begun.kind === 'replay') return replay(op, begun.response);
    const { claim } = begun;
    try {
      return await runCommand(op, input, call, { scope, holder: claim.holder });
    } catch (err) {
      const status = problemStatus(err);
      if (toProblemError(err).code === 'idempotency_key_in_progress') {
        // The claim was taken over (this request outlived its lease): the new holder's write stands.
      } else if (status >= 500 || isUnexpected(err)) {
        await abandonIdempotent(database.db, scope, claim.holder).catch(() => undefined);
      } else {
        const p = toProblemError(err);
        await completeIdempotent(database.db, scope, claim.holder, {
          status,
          body: null,
          headers: {},
          problem: { code: p.code, detail: p.detail, errors: p.errors, extra: p.extra, headers: p.headers },
        }).catch(() => undefined);
      }
      throw err;
    } finally {
      claim.release();
    }
  }

  /**
   * A Tier 1 write with an Idempotency-Key in one transaction (runtime/pipeline/idempotency.ts,
   * docs/writes.md): the claim is its first statement; the stored answer and the audit row are its
   * last, one statement together. A 4xx answer is stored after the rollback, a 5xx is not stored.
   */
  async function commandInTransaction(op: OperationDef, input: Record<string, unknown>, call: Call, scope: IdempotencyScope): Promise<CallResult> {
    let holder: string | null = null;
    let answer: CallResult | null = null;
    let final: { result: unknown; changed: boolean };
    try {
      final = await runHandler(
        op,
        input,
        call.principal,
        call.requestId,
        call.controls.ifMatch,
        false,
        async (tx, result, pending) => {
          const headers: Record<string, string> = {};
          const etag = etagOf(result);
          if (etag) headers.ETag = etag;
          answer = { status: op.successStatus, body: { outcome: 'ran', result }, outcome: 'ran', headers };
          // The stored copy holds the secrets sealed; the caller gets them in clear, once.
          const audit = deps.auditor ? auditRow(callEntry(call, { status: answer.status, outcome: answer.outcome, problemCode: null })) : null;
          // A write's one event rides on its last statement (the usual case: one round trip fewer).
          const event = pending.length === 1 ? pending.splice(0)[0]! : null;
          const stored = await completeWrite(tx, scope, holder!, { ...answer, body: { outcome: 'ran', result: secrets.seal(op.id, result) } }, audit, event);
          if (!stored) throw new ProblemError('idempotency_key_in_progress', 'The first request with this Idempotency-Key is still running; retry shortly.', { headers: { 'Retry-After': '1' } });
        },
        async (tx) => {
          const claim = await claimInTransaction(tx, scope, retentionHours, now());
          if (claim.kind === 'replay') throw new Replayed(claim.response);
          holder = claim.holder;
        },
      );
    } catch (err) {
      if (err instanceof Replayed) return replay(op, err.response);
      const status = problemStatus(err);
      const p = toProblemError(err);
      if (holder !== null && status < 500 && !isUnexpected(err) && p.code !== 'idempotency_key_in_progress') {
        await storeProblemAnswer(database.db, scope, retentionHours, {
          status,
          body: null,
          headers: {},
          problem: { code: p.code, detail: p.detail, errors: p.errors, extra: p.extra, headers: p.headers },
        }).catch(() => undefined);
      }
      throw err;
    }
    if (deps.auditor) auditedInTx.add(call.requestId);
    if (!final.changed) return answer!;
    return afterCommitAnswer(op, final.result, scope);
  }

  /** The answer of a write whose after-commit steps replaced its result; the stored idempotent answer follows it. */
  async function afterCommitAnswer(op: OperationDef, result: unknown, scope: IdempotencyScope | null): Promise<CallResult> {
    const headers: Record<string, string> = {};
    const etag = etagOf(result);
    if (etag) headers.ETag = etag;
    const answer: CallResult = { status: op.successStatus, body: { outcome: 'ran', result }, outcome: 'ran', headers };
    if (scope) {
      await replaceStoredAnswer(database.db, scope, { ...answer, body: { outcome: 'ran', result: secrets.seal(op.id, result) } }).catch((err: unknown) =>
        log(logLine('error', 'after_commit_answer_not_stored', { operationId: op.id, error: errorSummary(err) })),
      );
    }
    return answer;
  }

  function replay(op: OperationDef, stored: StoredResponse): CallResult {
    if (stored.problem) {
      const p = stored.problem;
      // A code the contract no longer defines replays as internal_error (toProblemError).
      if (!isProblemCode(p.code)) throw toProblemError(p);
      throw new ProblemError(p.code, p.detail, {
        errors: p.errors as never,
        extra: p.extra,
        headers: { ...p.headers, 'Idempotency-Replayed': 'true' },
      });
    }
    const body = stored.body as { outcome?: string; result?: unknown } | null;
    const outcome = (body?.outcome ?? 'ran') as CallResult['outcome'];
    // The record is keyed by credential, so this is the credential that caused the secret: open it.
    const opened = body && 'result' in body ? { ...body, result: secrets.open(op.id, body.result) } : body;
    return { status: stored.status, body: opened, outcome, headers: { ...stored.headers, 'Idempotency-Replayed': 'true' } };
  }

  async function runCommand(
    op: OperationDef,
    input: Record<string, unknown>,
    call: Call,
    held: { scope: IdempotencyScope; holder: string } | null,
  ): Promise<CallResult> {
    const store = held
      ? (tx: Db, answer: CallResult) =>
          completeIdempotent(tx, held.scope, held.holder, { status: answer.status, body: answer.body, headers: answer.headers })
      : null;

    if (op.tier === 2 || op.tier === 3) {
      // A proposal that would fail at once (not yours, invalid) is refused now: plan it first.
      await runHandler(op, input, call.principal, call.requestId, call.controls.ifMatch, true);
      const proposed = await database.transaction(async (tx) => {
        const row = await proposeApproval(tx, { op, input, principal: call.principal, expiryHours, now: now(), subjects: deps.approvalSubjects });
        const view = approvalView(row, now());
        const answer: CallResult = {
          status: 202,
          body: { outcome: 'proposed', approval: view },
          outcome: 'proposed',
          headers: { Location: view.pollUrl },
        };
        if (store) await store(tx, answer);
        await auditInTx(tx, call, answer);
        return answer;
      });
      auditedInTx.add(call.requestId);
      return proposed;
    }

    let answer: CallResult | null = null;
    const final = await runHandler(op, input, call.principal, call.requestId, call.controls.ifMatch, false, async (tx, result) => {
      const headers: Record<string, string> = {};
      const etag = etagOf(result);
      if (etag) headers.ETag = etag;
      answer = { status: op.successStatus, body: { outcome: 'ran', result }, outcome: 'ran', headers };
      // The stored copy holds the secrets sealed; the caller gets them in clear, once.
      if (store) await store(tx, { ...answer, body: { outcome: 'ran', result: secrets.seal(op.id, result) } });
      await auditInTx(tx, call, answer);
    });
    auditedInTx.add(call.requestId);
    return final.changed ? afterCommitAnswer(op, final.result, held?.scope ?? null) : answer!;
  }

  async function run(call: Call): Promise<CallResult> {
    const { op, principal } = call;
    checkEnabled(op, config);
    checkAccess(op, principal);
    const input = validateInput(op, validatorOf(op), call.input, maxDepth);
    await secrets.ready(database.db);
    if (op.kind === 'read') {
      const handler = handlerOf(op);
      const steps: AfterCommitStep[] = [];
      const read = await handler(input, context(database.db, op, principal, call.requestId, false, null, [], steps));
      checkResult(op, read);
      const body = steps.length > 0 ? await afterCommit(op, call.requestId, steps, read) : read;
      const headers: Record<string, string> = {};
      const etag = etagOf(body);
      if (etag) headers.ETag = etag;
      return { status: op.successStatus, body, outcome: 'read', headers };
    }
    return command(op, input, call);
  }

  const executor: PipelineExecutor = {
    async execute(call) {
      const started = performance.now();
      inflight.set(call.requestId, call);
      startedAt.set(call.requestId, started);
      let end: AuditedEnd = { status: 500, outcome: 'error', problemCode: null };
      try {
        const result = await run(call);
        end = { status: result.status, outcome: result.outcome, problemCode: null };
        return result;
      } catch (err) {
        if (isUnexpected(err)) {
          log(logLine('error', 'unexpected_error', { requestId: call.requestId, operationId: call.op.id, transport: call.transport, error: errorSummary(err) }));
        }
        const p = toProblemError(err);
        end = failedWith(p);
        throw p;
      } finally {
        // A committed command was audited in its own transaction; everything else (reads, dry runs,
        // refusals, failures) is audited here, in batches.
        if (!auditedInTx.delete(call.requestId)) deps.auditor?.record(callEntry(call, end));
        inflight.delete(call.requestId);
        startedAt.delete(call.requestId);
      }
    },

    async runProposed(db, row, requestId, mode = { dryRun: false, sink: [] }) {
      const op = deps.operationsById[row.operationId];
      const started = performance.now();
      let proposer: Principal | null = null;
      let outcome: ApprovedWriteOutcome;
      try {
        if (!op) throw new ProblemError('not_found', `The operation ${row.operationId} no longer exists.`);
        proposer = await rebuild(db, row);
        checkAccess(op, proposer);
        const input = validateInput(op, validatorOf(op), row.input as Record<string, unknown>, maxDepth);
        const handler = handlerOf(op);
        const who = proposer;
        // A savepoint: a failing write is rolled back while the decision itself is kept.
        // The approved write's result is kept on the approval with its secrets sealed: the proposing
        // credential opens them there (approvals.get), everyone else sees them removed.
        const result = await db.transaction(async (sp) => {
          const tx = sp as unknown as Db;
          const emitted: EmittedEvent[] = [];
          const steps: AfterCommitStep[] = [];
          const pending: PendingEvent[] = [];
          const value = await handler(input, context(tx, op, who, requestId, mode.dryRun, null, emitted, steps, pending));
          checkResult(op, value);
          await scrubEventSecrets(tx, emitted, secrets.values(op.id, value));
          await writePending(tx, pending);
          mode.sink.push(...emitted);
          // Run once the approve commits, for their effect: the approval keeps the committed result.
          if (!mode.dryRun) for (const step of steps) mode.afterCommit?.push((r, db) => step(value, db).then(() => r));
          return secrets.seal(op.id, value);
        });
        outcome = { ok: true, result };
      } catch (err) {
        if (isUnexpected(err)) {
          log(logLine('error', 'approved_write_failed', { requestId, operationId: row.operationId, approvalId: row.id, error: errorSummary(err) }));
        }
        outcome = { ok: false, problem: storedProblem(toProblemError(err), requestId, config.baseUrl, row.id) };
      }
      // The approved write is a call of its own, made as the proposer: audit it as such.
      const via = inflight.get(requestId);
      const request = {
        requestId,
        transport: via?.transport ?? 'rest',
        operationId: row.operationId,
        toolName: null,
        method: via?.method ?? 'POST',
        path: via?.path ?? `/v1/approvals/${row.id}`,
      };
      const who = proposer ?? {
        kind: row.proposerKind as Principal['kind'],
        id: row.proposerId,
        credentialId: row.proposerCredentialId,
        loginMethod: row.proposerLoginMethod as Principal['loginMethod'],
      };
      const end: AuditedEnd = {
        status: outcome.ok ? (op?.successStatus ?? 200) : (outcome.problem?.status ?? 500),
        outcome: outcome.ok ? (mode.dryRun ? 'planned' : 'ran') : 'error',
        problemCode: outcome.ok ? null : (outcome.problem?.code ?? null),
      };
      const entry = auditEntry(request, who, end, started);
      // A real approved write commits (or not) with the approve's transaction: its row goes in it.
      if (deps.auditor && !mode.dryRun) await deps.auditor.recordIn(db, entry);
      else deps.auditor?.record(entry);
      return outcome;
    },
  };
  return executor;
}

