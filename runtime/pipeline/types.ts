// The seam between transports (REST in runtime/http/rest, MCP in runtime/mcp) and the one pipeline
// (runtime/pipeline). A transport authenticates, turns its request into a Call, and renders the
// CallResult or the thrown ProblemError in its own way. Everything in between runs once, here.
import type { OperationDef } from '../contract-types.ts';
import type { Principal } from '../handler-types.ts';

export type Transport = 'rest' | 'mcp';

/** The request controls REST carries as headers and MCP as optional tool arguments. */
export interface Controls {
  idempotencyKey: string | null;
  ifMatch: string | null;
  dryRun: boolean;
}

export interface Call {
  op: OperationDef;
  transport: Transport;
  /** MCP tool name as called (svc.tasks.create or its alias), null on REST. */
  toolName: string | null;
  /** The operation's input object, not yet validated (REST: path+query+body merged and coerced). */
  input: Record<string, unknown>;
  controls: Controls;
  principal: Principal;
  requestId: string;
  /** For audit: HTTP method and path as received (paths never carry personal data). */
  method: string;
  path: string;
}

export type Outcome = 'ran' | 'planned' | 'proposed';

export interface Plan {
  operationId: string;
  /** Human-readable effects the write would have. */
  effects: string[];
  /** Event types it would emit. */
  events: string[];
  approvalRequired: boolean;
  /** The result it would have returned, computed in a rolled-back transaction. */
  preview: unknown;
}

export interface CallResult {
  status: number;
  /** Reads: the output. Commands: {outcome:'ran', result} | {outcome:'planned', plan} | {outcome:'proposed', approval}. */
  body: unknown;
  outcome: Outcome | 'read';
  /** ETag, Location, Idempotency-Replayed, ... */
  headers: Record<string, string>;
}

export interface Executor {
  /** Runs the pipeline from operation checks to the handler and audit. Throws ProblemError. */
  execute(call: Call): Promise<CallResult>;
}
