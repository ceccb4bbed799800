// Calling handler bodies directly: a HandlerContext on a real (fresh) database, inside a
// transaction as the pipeline runs them, with emitted events collected for assertions.
import type { PrincipalKind } from '../../runtime/contract-types.ts';
import type { Database } from '../../runtime/data/client.ts';
import type { AfterCommitStep, EventSubject, HandlerContext, Principal } from '../../runtime/handler-types.ts';
import { Policy } from '../../runtime/auth/policy.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import { service } from '../../generated/registry.ts';

/** Every scope of the contract, canonical order. */
export const ALL_SCOPES: readonly string[] = service.scopes;

export function principal(
  kind: PrincipalKind,
  id: string,
  clientScope: { all: boolean; clientIds: string[] },
  scopes: readonly string[] = ALL_SCOPES,
  role = kind === 'client_admin' ? 'tasks:write' : 'operator',
): Principal {
  return {
    kind,
    id,
    // People sign in with OAuth (operators are widened by rules 1-3); a service account is an API key.
    loginMethod: kind === 'service_account' ? 'api_key' : 'oauth',
    credentialId: `cred_${id}`,
    role,
    scopes: new Set(scopes),
    clientScope,
    oauthClientId: kind === 'service_account' ? null : 'oac_test',
  };
}

export interface EmittedEvent {
  type: string;
  subject: EventSubject;
  data: Record<string, unknown>;
}

export interface Caller {
  principal: Principal;
  /** Events emitted by committed calls, in order. */
  events: EmittedEvent[];
  call<I, O>(
    handler: (input: I, ctx: HandlerContext) => Promise<O>,
    input: I,
    options?: { ifMatch?: string | null; now?: Date; operationId?: string },
  ): Promise<O>;
}

export function caller(database: Database, p: Principal): Caller {
  const events: EmittedEvent[] = [];
  return {
    principal: p,
    events,
    async call(handler, input, options = {}) {
      const pending: EmittedEvent[] = [];
      const steps: AfterCommitStep[] = [];
      const committed = await database.transaction((tx) => {
        const ctx: HandlerContext = {
          db: tx,
          principal: p,
          policy: new Policy(p),
          operationId: options.operationId ?? 'test',
          requestId: 'req_test',
          dryRun: false,
          ifMatch: options.ifMatch ?? null,
          now: options.now ?? new Date(),
          baseUrl: 'http://svc.test',
          async emit(type, subject, data) {
            pending.push({ type, subject, data });
          },
          // Approved writes run through the pipeline (test/pipeline, test/e2e), not handler calls.
          runAsProposer: async () => {
            throw new Error('runAsProposer needs the pipeline: call approvals.approve through the server');
          },
          openSecrets() {
            throw new Error('handler unit tests open no secrets (the e2e secret tests do)');
          },
          afterCommit(step) {
            steps.push(step as AfterCommitStep);
          },
        };
        return handler(input, ctx);
      });
      events.push(...pending);
      // As the pipeline does: after-commit steps run once the transaction has committed, outside it.
      let result: unknown = committed;
      for (const step of steps) result = await step(result, database.db);
      return result as typeof committed;
    },
  };
}

/** The ProblemError a handler call rejects with (fails the test when it resolves or throws something else). */
export async function problem(p: Promise<unknown>): Promise<ProblemError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ProblemError) return e;
    throw e;
  }
  throw new Error('expected a problem');
}
