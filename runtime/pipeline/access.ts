// Stages after authentication and rate limit: operation audience and scope, then the write switch.
import type { OperationDef } from '../contract-types.ts';
import type { Principal } from '../handler-types.ts';
import { ProblemError } from '../problem-error.ts';
import { insufficientScope } from '../problems.ts';

/**
 * Audience and scope. An operation outside the caller's audience does not exist for it (404, the
 * spec's "not found or not yours"); a missing scope is 403 insufficient_scope naming the scope in
 * `detail` and in `requiredScope`.
 */
export function checkAccess(op: OperationDef, principal: Principal): void {
  if (!op.audience.includes(principal.kind)) {
    throw new ProblemError('not_found', `No such operation for this caller.`);
  }
  if (op.scope !== null && !principal.scopes.has(op.scope)) throw insufficientScope(op.scope, op.id);
}

/** API_WRITES_ENABLED off: every command answers 404 not_found (REST and MCP); reads are unaffected. */
export function checkWriteSwitch(op: OperationDef, writesEnabled: boolean): void {
  if (op.kind === 'command' && !writesEnabled) {
    throw new ProblemError('not_found', 'Not found: commands are switched off on this service.');
  }
}
