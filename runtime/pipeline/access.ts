// Stages after authentication and rate limit: first whether the operation is switched on at all
// (write switch and feature flags: 404 to every caller, before anything else is revealed), then
// the operation's audience and scope.
import type { Config } from '../config.ts';
import type { OperationDef } from '../contract-types.ts';
import type { Principal } from '../handler-types.ts';
import { ProblemError } from '../problem-error.ts';
import { insufficientScope } from '../problem-documents.ts';

/** The switches an operation depends on (runtime/config.ts). */
export type Switches = Pick<Config, 'writesEnabled' | 'webhooksEnabled' | 'eventStreamEnabled'>;

/** The family the API_WEBHOOKS_ENABLED flag switches, and the operation API_EVENT_STREAM_ENABLED does. */
const WEBHOOKS_FAMILY = 'webhooks';
const EVENT_STREAM_OPERATION = 'events.stream';

/** Why the operation is switched off on this service, or null when it is on. */
export function switchedOff(op: OperationDef, switches: Switches): string | null {
  if (op.family === WEBHOOKS_FAMILY && !switches.webhooksEnabled) return 'webhooks are switched off on this service (API_WEBHOOKS_ENABLED)';
  if (op.id === EVENT_STREAM_OPERATION && !switches.eventStreamEnabled) return 'the event stream is switched off on this service (API_EVENT_STREAM_ENABLED)';
  if (op.kind === 'command' && !switches.writesEnabled) return 'commands are switched off on this service (API_WRITES_ENABLED)';
  return null;
}

/**
 * The write switch and the feature flags, checked before audience and scope: a switched-off
 * operation answers 404 not_found to every caller (REST and MCP), so no one learns it exists.
 */
export function checkEnabled(op: OperationDef, switches: Switches): void {
  const why = switchedOff(op, switches);
  if (why) throw new ProblemError('not_found', `Not found: ${why}.`);
}

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
