// The MCP transport at /mcp: stateless Streamable HTTP built on the SDK's low-level `Server`, so the
// contract's JSON Schemas are published exactly as generated. Like REST, it only authenticates,
// turns a request into a `Call` and renders what the executor returns; every rule (scopes, audience,
// write switch, validation, tiers, idempotency, dry-run, If-Match, audit) lives in the pipeline.
//
// Per HTTP request: authenticate -> fresh Server + fresh transport (the SDK forbids reuse since
// 1.26) -> JSON-RPC. Domain failures are tool results with isError; JSON-RPC errors are for
// messages that are not valid requests (-32600), tools/call params that cannot be run and unknown
// tools (-32602; mcp/jsonrpc.ts). Before anything else, a browser's Origin must be the service's
// own or one of SVC_ALLOWED_ORIGINS (403 forbidden); requests without Origin pass.
//
// Two modes on the one endpoint, chosen by the query string: POST /mcp lists every tool the caller
// may call (static, the default); POST /mcp?mode=dynamic lists the contract's meta-tools instead
// (mcp/dynamic.ts), whose read and invoke run a tool through `runTool`, the static tools/call's own
// path. Both serve the agent guide and llms.txt as resources (mcp/resources.ts).
import type { Context, Hono } from 'hono';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  isJSONRPCRequest,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpDynamicToolDef, McpToolDef, OperationDef } from '../contract-types.ts';
import { contractFacts } from '../contract-facts.ts';
import type { Config } from '../config.ts';
import type { Principal } from '../handler-types.ts';
import type { Call, CallResult, Controls, Executor } from '../pipeline/types.ts';
import type { AppEnv, RequestAuthenticator } from '../http/app-env.ts';
import { ProblemError, validationFailed, type FieldError } from '../problem-error.ts';
import { readLimitedBody } from '../http/rest/input.ts';
import { switchedOff } from '../pipeline/access.ts';
import { parseStrictJson } from '../pipeline/json.ts';
import { INVALID_PARAMS, INVALID_REQUEST, JsonRpcError, invalidRequest, resolveCall, takeToolCalls, type TakenCall } from './jsonrpc.ts';
import { isUnexpected, problemBody as defaultProblemBody, problemHeaders, PROBLEM_MEDIA_TYPE, type ProblemDocument } from '../problem-documents.ts';
import { errorSummary, logLine, stderrLog } from '../observability/log.ts';
import { createDynamicMode, type DynamicCall } from './dynamic.ts';
import { resourceTable, serveResources, type McpResource } from './resources.ts';
import { metrics } from '../observability/index.ts';
import type { ToolEntry } from './tool-entry.ts';

export type { ToolEntry };

export const MCP_PATH = '/mcp';

/** Protocol versions /mcp serves, newest first (contract/svc.yaml mcpProtocolVersions). */

export type { ProblemDocument };

export interface McpDeps {
  executor: Executor;
  /**
   * The shared authenticate step (runtime/pipeline/types.ts RequestAuthenticator): authenticates,
   * counts the credential's rate limit, records c.var.principal, audits a refusal.
   */
  authenticateRequest: RequestAuthenticator;
  config: Config;
  /** The generated tool table (generated/mcp-tools.ts), sorted. */
  tools: readonly McpToolDef[];
  operationsById: Record<string, OperationDef>;
  /** Default: runtime/problem-documents.ts problemBody. */
  problemBody?: (err: ProblemError, instance: string, requestId: string, baseUrl: string) => ProblemDocument;
  /** Default: c.get('requestId'), set by the app-wide middleware. */
  getRequestId?: (c: Context<any>) => string;
  /** The contract's mcpProtocolVersions (service.mcpProtocolVersions), newest first. */
  protocolVersions: readonly string[];
  /** serverInfo.version: the contract version (service.contractVersion). */
  serverVersion: string;
  /** Log lines (runtime/observability/log.ts logLine); default stderr. */
  log?: (message: string) => void;
  /** Largest JSON-RPC body accepted (413 payload_too_large beyond): limits.requestBodyMaxBytes, as REST. */
  maxBodyBytes: number;
  /** limits.maxJsonDepth: nesting of tool arguments (the JSON-RPC envelope adds its own levels). */
  maxJsonDepth: number;
  /**
   * Spends `units` more of the principal's rate limit (each tools/call of a batch beyond the first,
   * which the authenticate step counted); throws rate_limited when they are not left.
   */
  spendRateLimit?: (c: Context<any>, principal: Principal, units: number) => void | Promise<void>;
  /**
   * The dynamic mode (POST /mcp?mode=dynamic): the contract's meta-tools (service.mcpDynamicTools)
   * and limits.mcpSearchMaxResults. Absent or without tools: the service has no dynamic mode.
   */
  dynamic?: { tools: readonly McpDynamicToolDef[]; searchMaxResults: number; familyDescriptions?: Readonly<Record<string, string>> };
  /** Resources both modes serve (the agent guide, llms.txt); default none. */
  resources?: readonly McpResource[];
  /**
   * Records the audit row of a call that dynamic read/invoke refused because the caller may not
   * call that (existing) tool: the executor never saw it, so the transport records it.
   */
  auditRefusal?: (c: Context<any>, principal: Principal, call: { operationId: string; toolName: string }, problem: ProblemError) => void;
}

/** The discovery mode of a request: `?mode=` absent or `static`, or `dynamic`. */
export type McpMode = 'static' | 'dynamic';
const MODES: readonly McpMode[] = ['static', 'dynamic'];

/** Levels a tool's arguments sit below the top of a JSON-RPC body: [batch,] message, params. */
const ENVELOPE_DEPTH = 3;

const CONTROL_NAMES = ['idempotencyKey', 'ifMatch', 'dryRun'] as const;

/** `svc.tasks.create` -> `svc_tasks_create` (any prefix: `acme.tasks.create` -> `acme_tasks_create`). */
export function underscoreAlias(name: string): string {
  return name.replace(/\./g, '_');
}

/** Builds the name -> tool table once; throws at mount on an inconsistent tool table. */
export function buildToolTable(
  tools: readonly McpToolDef[],
  operationsById: Record<string, OperationDef>,
  aliases: boolean,
): { entries: ToolEntry[]; byName: Map<string, ToolEntry> } {
  const byToolName = new Map<string, OperationDef>();
  for (const op of Object.values(operationsById)) if (op.mcp) byToolName.set(op.mcp.name, op);
  const entries: ToolEntry[] = [];
  for (const def of tools) {
    // A tool is `<prefix>.<operation id>` (service.mcpToolPrefix, never dotted): past the first dot is the id.
    const op = byToolName.get(def.name) ?? operationsById[def.name.slice(def.name.indexOf('.') + 1)];
    if (!op) throw new Error(`MCP tool ${def.name} has no operation in the registry`);
    entries.push({ name: def.name, def, op, alias: false });
  }
  if (aliases) {
    for (const e of [...entries]) entries.push({ ...e, name: underscoreAlias(e.name), alias: true });
  }
  const byName = new Map<string, ToolEntry>();
  for (const e of entries) {
    if (byName.has(e.name)) throw new Error(`MCP tool name ${e.name} is not unique`);
    byName.set(e.name, e);
  }
  return { entries, byName };
}

/** Whether the principal may see (and so call) the tool: audience and scope, as the pipeline checks them. */
export function toolAllowed(op: OperationDef, principal: Principal): boolean {
  if (!op.audience.includes(principal.kind)) return false;
  return op.scope === null || principal.scopes.has(op.scope);
}

function publishedTool(entry: ToolEntry): Tool {
  const { def } = entry;
  return {
    name: entry.name,
    title: def.title,
    description: entry.alias ? `${def.description}\n\nAlias of ${def.name}.` : def.description,
    inputSchema: def.inputSchema as Tool['inputSchema'],
    outputSchema: def.outputSchema as Tool['outputSchema'],
    annotations: { ...def.annotations },
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Splits tool arguments into the operation input and the request controls. A control is taken out
 * only where the tool's inputSchema declares it (commands); elsewhere it stays in the input, so
 * the pipeline's validation refuses it as an unknown field, as the published schema says.
 */
export function splitArguments(
  def: McpToolDef,
  args: unknown,
): { input: Record<string, unknown>; controls: Controls } {
  if (args !== undefined && args !== null && !isPlainObject(args)) {
    throw validationFailed([{ pointer: '', message: 'must be an object' }], 'The tool arguments must be an object.');
  }
  const input: Record<string, unknown> = { ...(args ?? {}) };
  const declared = isPlainObject(def.inputSchema.properties) ? def.inputSchema.properties : {};
  const controls: Controls = { idempotencyKey: null, ifMatch: null, dryRun: false };
  const errors: FieldError[] = [];
  for (const name of CONTROL_NAMES) {
    if (!(name in declared)) continue;
    const value = input[name];
    delete input[name];
    if (value === undefined || value === null) continue;
    if (name === 'dryRun') {
      if (typeof value === 'boolean') controls.dryRun = value;
      else errors.push({ pointer: '/dryRun', message: 'must be boolean' });
    } else if (typeof value === 'string') {
      controls[name] = value;
    } else {
      errors.push({ pointer: `/${name}`, message: 'must be string' });
    }
  }
  if (errors.length > 0) throw validationFailed(errors);
  return { input, controls };
}

/** The outcome envelope of a successful call: reads are wrapped, commands already carry theirs. */
export function outcomeEnvelope(result: CallResult): Record<string, unknown> {
  if (result.outcome === 'read') return { outcome: 'ran', result: result.body };
  if (isPlainObject(result.body) && typeof result.body.outcome === 'string') return result.body;
  return { outcome: result.outcome, result: result.body };
}

export function successResult(result: CallResult): CallToolResult {
  const envelope = outcomeEnvelope(result);
  const meta: Record<string, unknown> = { 'svc/status': result.status };
  const replayed = Object.entries(result.headers).find(([k]) => k.toLowerCase() === 'idempotency-replayed');
  if (replayed) meta['svc/idempotencyReplayed'] = replayed[1] === 'true';
  const etag = Object.entries(result.headers).find(([k]) => k.toLowerCase() === 'etag');
  if (etag) meta['svc/etag'] = etag[1];
  // Members in the order the SDK's CallToolResultSchema gives them (_meta first): the direct path
  // below answers byte for byte what the SDK path does.
  return {
    _meta: meta,
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    structuredContent: envelope,
  };
}

/** The isError tool result: the problem's code, status and retry class, valid against outputSchema. */
export function errorResult(problem: ProblemDocument): CallToolResult {
  const error = {
    code: problem.code,
    status: problem.status,
    title: problem.title,
    detail: problem.detail,
    retryable: problem.retryable,
    errors: problem.errors ?? [],
  };
  const envelope = { outcome: 'error', error };
  return {
    _meta: { 'svc/requestId': problem.requestId, 'svc/type': problem.type },
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    structuredContent: envelope,
    isError: true,
  };
}

/** The problem to answer for an MCP failure: a ProblemError as it is; anything else logged, then internal_error. */
function mcpProblemOf(err: unknown, log: (message: string) => void = stderrLog, requestId = 'unknown'): ProblemError {
  if (!isUnexpected(err)) return err as ProblemError;
  // Logged without arguments or bodies: only the error itself.
  log(logLine('error', 'unexpected_error', { requestId, method: 'POST', path: MCP_PATH, error: errorSummary(err) }));
  return new ProblemError('internal_error', 'An unexpected error occurred. Quote the requestId when reporting it.');
}

const RESULT_MEMBERS = '_meta,content,structuredContent';
const ERROR_RESULT_MEMBERS = `${RESULT_MEMBERS},isError`;

/**
 * JSON.stringify(result) for the results successResult and errorResult make (the only builders of
 * tool results), without serialising the envelope twice: their structuredContent is the very value
 * their one text content holds as JSON. Any other shape is serialised as it is.
 */
export function toolResultJson(result: CallToolResult): string {
  const members = Object.keys(result).join();
  const only = result.content.length === 1 ? result.content[0] : undefined;
  if ((members !== RESULT_MEMBERS && members !== ERROR_RESULT_MEMBERS) || only?.type !== 'text' || Object.keys(only).length !== 2) return JSON.stringify(result);
  return `{"_meta":${JSON.stringify(result._meta)},"content":[{"type":"text","text":${JSON.stringify(only.text)}}],"structuredContent":${only.text}${result.isError === true ? ',"isError":true' : members === ERROR_RESULT_MEMBERS ? `,"isError":${JSON.stringify(result.isError)}` : ''}}`;
}

function jsonRpcError(status: number, code: number, message: string, data?: Record<string, unknown>): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: data ? { code, message, data } : { code, message }, id: null }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

export function mountMcp(app: Hono<any>, deps: McpDeps): void {
  const { config, executor } = deps;
  const { entries, byName } = buildToolTable(deps.tools, deps.operationsById, config.mcpUnderscoreAliases);
  const published = new Map(entries.map((e) => [e.name, publishedTool(e)]));
  const protocolVersions = deps.protocolVersions;
  const problemBody = deps.problemBody ?? defaultProblemBody;
  const maxBodyBytes = deps.maxBodyBytes;
  const log = deps.log ?? stderrLog;
  const getRequestId = deps.getRequestId ?? ((c: Context<any>) => (c as Context<AppEnv>).get('requestId') ?? 'unknown');
  const authenticate = (c: Context<any>): Promise<Principal> => deps.authenticateRequest(c as Context<AppEnv>);
  const resourceMetadata = `${config.baseUrl}/.well-known/oauth-protected-resource${MCP_PATH}`;
  // What the contract has: its title, its meta tool (if any), client scope and approvals (features).
  const facts = contractFacts();
  const metaTool = deps.operationsById['meta.get']?.mcp?.name;
  const instructions =
    `Tools of ${facts.title} (contract ${deps.serverVersion}). ` +
    (metaTool ? `Call ${metaTool} first: it returns your effective scopes${facts.features.clientTenancy ? ' and client scope' : ''}. ` : '') +
    'Commands take the optional controls ' +
    'idempotencyKey (a UUID; required on creating tools, reuse it when retrying), ifMatch (the ETag) and ' +
    `dryRun. Every result says whether the operation ran, was planned${facts.features.approvals ? ' or was proposed for approval' : ''}; ` +
    `a failure is a result with isError and the problem code. Guide: ${config.baseUrl}/v1/agent-guide.md`;

  function problemResponse(c: Context<any>, err: ProblemError, extraHeaders: Record<string, string> = {}): Response {
    const body = problemBody(err, MCP_PATH, getRequestId(c), config.baseUrl);
    const headers: Record<string, string> = { ...problemHeaders(err), ...extraHeaders, 'Content-Type': PROBLEM_MEDIA_TYPE };
    return new Response(JSON.stringify(body), { status: body.status, headers });
  }

  /**
   * Runs a tool through the pipeline and renders its result: what tools/call of that tool answers,
   * in static mode and through the dynamic mode's read and invoke alike.
   */
  async function runTool(c: Context<any>, principal: Principal, entry: ToolEntry, args: unknown): Promise<CallToolResult> {
    const requestId = getRequestId(c);
    const started = performance.now();
    try {
      // Audience and scope are not pre-checked here: the executor checks them (and audits the
      // refusal) exactly as for REST, so a hidden tool answers the same problem as its route.
      const { input, controls } = splitArguments(entry.def, args);
      const call: Call = {
        op: entry.op,
        transport: 'mcp',
        toolName: entry.name,
        input,
        controls,
        principal,
        requestId,
        method: c.req.method,
        path: MCP_PATH,
      };
      const result = await executor.execute(call);
      metrics.callEnded('mcp', entry.op.id, started, result);
      return successResult(result);
    } catch (err) {
      metrics.callEnded('mcp', entry.op.id, started, null, err);
      return errorResult(problemBody(mcpProblemOf(err, log, requestId), MCP_PATH, requestId, config.baseUrl));
    }
  }

  async function callTool(c: Context<any>, principal: Principal, taken: TakenCall): Promise<CallToolResult> {
    if (taken.refusal) throw new JsonRpcError(INVALID_PARAMS, taken.refusal);
    const entry = byName.get(taken.name);
    if (!entry) throw new JsonRpcError(INVALID_PARAMS, `Unknown tool: ${JSON.stringify(taken.name)}.`);
    return runTool(c, principal, entry, taken.arguments);
  }

  // The dynamic mode: its meta-tools run over this tool table, each caller's tools/list and runTool.
  const dynamicTools = deps.dynamic?.tools ?? [];
  const dynamic =
    dynamicTools.length > 0
      ? createDynamicMode({
          tools: dynamicTools,
          entries,
          published,
          aliases: config.mcpUnderscoreAliases,
          searchMax: deps.dynamic!.searchMaxResults,
          familyDescriptions: deps.dynamic!.familyDescriptions ?? {},
          // What is switched off is said in every refusal, known tool or not.
          switchedOff: () => [...new Set(entries.map((e) => switchedOff(e.op, config)).filter((why): why is string => why !== null))],
          guideUrl: `${config.baseUrl}/v1/agent-guide.md`,
          serverVersion: deps.serverVersion,
        })
      : null;

  async function callMetaTool(c: Context<any>, principal: Principal, taken: TakenCall): Promise<CallToolResult> {
    if (taken.refusal) throw new JsonRpcError(INVALID_PARAMS, taken.refusal);
    const requestId = getRequestId(c);
    const callable = callableFor(principal);
    const ctx: DynamicCall = {
      callable: (name) => callable.has(name),
      run: (entry, args) => runTool(c, principal, entry, args),
      refused: (entry) => deps.auditRefusal?.(c, principal, { operationId: entry.op.id, toolName: entry.name }, new ProblemError('not_found', 'not a tool this caller may call')),
      answer: (body) => successResult({ status: 200, body, outcome: 'read', headers: {} }),
    };
    try {
      return await dynamic!.call(taken.name, taken.arguments, ctx);
    } catch (err) {
      return errorResult(problemBody(mcpProblemOf(err, log, requestId), MCP_PATH, requestId, config.baseUrl));
    }
  }

  const resources = resourceTable(deps.resources ?? []);

  // The Server builds a fresh Ajv instance unless given one (most of its construction cost); it is
  // only used for elicitation, which svc never does, so one shared instance serves every request.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  // tools/list depends only on the switches (writes, webhooks, event stream) and the principal's kind
  // and scopes: built once per (flags, kind, scope set) and reused by every request with the same.
  const listCache = new Map<string, Tool[]>();
  function toolsFor(principal: Principal): Tool[] {
    const flags = `${+config.writesEnabled}${+config.webhooksEnabled}${+config.eventStreamEnabled}`;
    const key = `${flags}|${principal.kind}|${[...principal.scopes].sort().join(' ')}`;
    let tools = listCache.get(key);
    if (!tools) {
      tools = entries.filter((e) => switchedOff(e.op, config) === null && toolAllowed(e.op, principal)).map((e) => published.get(e.name)!);
      // Scope sets are few (roles, keys' subsets); bounded anyway.
      if (listCache.size >= 1000) listCache.clear(); // not a contract limit
      listCache.set(key, tools);
    }
    return tools;
  }
  /** The names the principal may call: its static tools/list, as a set (cached alongside). */
  const callableCache = new WeakMap<Tool[], Set<string>>();
  function callableFor(principal: Principal): Set<string> {
    const tools = toolsFor(principal);
    let names = callableCache.get(tools);
    if (!names) callableCache.set(tools, (names = new Set(tools.map((t) => t.name))));
    return names;
  }

  /** What the request a pooled Server is serving brought: its context, principal and tools/call params. */
  interface Serving {
    c: Context<any>;
    principal: Principal;
    calls: readonly TakenCall[];
  }
  interface PooledServer {
    server: Server;
    serving: Serving | null;
  }

  /** What differs between the modes: the instructions, tools/list and how tools/call runs. */
  const modes: Record<McpMode, { instructions: string; list: (principal: Principal) => Tool[]; call: typeof callTool }> = {
    static: { instructions, list: toolsFor, call: callTool },
    dynamic: { instructions: dynamic?.instructions ?? instructions, list: () => dynamic?.list ?? [], call: callMetaTool },
  };

  function newServer(mode: McpMode): PooledServer {
    const pooled: PooledServer = {
      server: new Server(
        { name: 'svc', title: facts.title, version: deps.serverVersion },
        { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: modes[mode].instructions, jsonSchemaValidator },
      ),
      serving: null,
    };
    const serving = (): Serving => {
      if (!pooled.serving) throw new JsonRpcError(INVALID_PARAMS, 'This server is not serving a request.');
      return pooled.serving;
    };
    pooled.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: modes[mode].list(serving().principal) }));
    pooled.server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { c, principal, calls } = serving();
      const taken = resolveCall(calls, request.params.name);
      if (!taken) throw new JsonRpcError(INVALID_PARAMS, 'tools/call params were not read by this server.');
      return modes[mode].call(c, principal, taken);
    });
    serveResources(pooled.server, resources);
    return pooled;
  }

  // The stateless transport needs a fresh transport per request, and a Server serves one transport at
  // a time; a Server is reused once its request is over and it is closed (a fresh one per request
  // cost about 90 us more a call: its construction and a colder JIT). Bounded; created on demand,
  // one pool per mode (a Server's instructions are its mode's).
  const idle: Record<McpMode, PooledServer[]> = { static: [], dynamic: [] };
  const IDLE_SERVERS = 64; // not a contract limit: how many closed Servers are kept for reuse, per mode
  function takeServer(mode: McpMode, serving: Serving): PooledServer {
    const pooled = idle[mode].pop() ?? newServer(mode);
    pooled.serving = serving;
    return pooled;
  }
  async function releaseServer(mode: McpMode, pooled: PooledServer): Promise<void> {
    try {
      await pooled.server.close(); // closes the transport too
    } catch {
      return; // not reused
    }
    pooled.serving = null;
    if (idle[mode].length < IDLE_SERVERS) idle[mode].push(pooled);
  }

  /** The request's mode from `?mode=`, or a validation_failed problem naming the parameter. */
  function modeOf(c: Context<any>): McpMode {
    const asked = c.req.queries('mode') ?? [];
    if (asked.length === 0) return 'static';
    const mode = asked[0] as McpMode;
    if (asked.length > 1) throw invalidQuery('must be given once');
    if (!MODES.includes(mode)) throw invalidQuery(`must be one of ${MODES.map((m) => JSON.stringify(m)).join(', ')}`);
    if (mode === 'dynamic' && !dynamic) throw invalidQuery('this service has no dynamic mode (its contract lists no meta-tools)');
    return mode;
  }
  function invalidQuery(message: string): ProblemError {
    return validationFailed([{ pointer: '/mode', message }], `The query parameter mode ${message}.`);
  }

  /** Origins a browser may call /mcp from: the service's own and SVC_ALLOWED_ORIGINS. */
  const allowedOrigins = new Set([new URL(config.baseUrl).origin, ...config.allowedOrigins]);
  function originRefused(c: Context<any>): Response | null {
    const origin = c.req.header('origin');
    if (origin === undefined || allowedOrigins.has(origin)) return null;
    return problemResponse(
      c,
      new ProblemError('forbidden', `Requests from the origin ${JSON.stringify(origin.slice(0, 200))} are not accepted on ${MCP_PATH}; the service admits its own origin and SVC_ALLOWED_ORIGINS.`), // not a contract limit: echo length
    );
  }

  /**
   * The direct path, when the SDK would have nothing to add: a single tools/call request (no batch,
   * no params._meta, already taken out by takeToolCalls) that the SDK's own JSON-RPC request schema
   * accepts (strict: no unknown member, no result or error beside method), with the Accept and
   * Content-Type the transport requires and a protocol version it supports. Anything else goes
   * through the SDK, which answers (or refuses) it itself.
   */
  function directCall(c: Context<any>, parsed: unknown, calls: readonly TakenCall[]): ((mode: McpMode, principal: Principal) => Promise<Response>) | null {
    if (calls.length !== 1 || Array.isArray(parsed)) return null;
    const message = parsed as Record<string, unknown>;
    if (message.method !== 'tools/call' || (message.params as Record<string, unknown>)._meta !== undefined) return null;
    if (!isJSONRPCRequest(message)) return null;
    const accept = c.req.header('accept');
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
    const contentType = c.req.header('content-type')?.trim().toLowerCase();
    if (contentType !== 'application/json' && contentType !== 'application/json; charset=utf-8') return null;
    const version = c.req.header('mcp-protocol-version');
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
    const id = message.id;
    return async (mode, principal) => {
      let body: string;
      try {
        body = `{"result":${toolResultJson(await modes[mode].call(c, principal, calls[0]!))},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
      } catch (err) {
        // As the SDK's Protocol answers a handler's error.
        const e = err as { code?: unknown; message?: string; data?: unknown };
        const error = { code: Number.isSafeInteger(e.code) ? e.code : ErrorCode.InternalError, message: e.message ?? 'Internal error', ...(e.data !== undefined && { data: e.data }) };
        body = JSON.stringify({ jsonrpc: '2.0', id, error });
      }
      return new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } });
    };
  }

  app.post(MCP_PATH, async (c) => {
    const refused = originRefused(c);
    if (refused) return refused;
    const authorization = c.req.header('authorization');
    let principal: Principal;
    try {
      principal = await authenticate(c);
    } catch (err) {
      const problem = mcpProblemOf(err, log, getRequestId(c));
      const extra: Record<string, string> = {};
      if (problem.code === 'unauthorized' || problem.code === 'invalid_token') {
        const refused = problem.code === 'invalid_token' || (authorization !== undefined && authorization.trim() !== '');
        extra['WWW-Authenticate'] =
          `Bearer resource_metadata="${resourceMetadata}"` + (refused ? ', error="invalid_token"' : '');
      }
      return problemResponse(c, problem, extra);
    }
    let mode: McpMode;
    try {
      mode = modeOf(c);
    } catch (err) {
      return problemResponse(c, mcpProblemOf(err, log, getRequestId(c)));
    }
    // Read the body ourselves, bounded (413 like REST); the transport then gets it parsed.
    let parsed: unknown;
    try {
      // Not UTF-8, not JSON, a name twice: -32700 (malformed_json); too large 413, too deep 422.
      // A dynamic call carries the tool's arguments one level deeper (in its `arguments`), which the
      // pipeline then checks against limits.maxJsonDepth as it does a static call's.
      parsed = parseStrictJson(await readLimitedBody(c, maxBodyBytes), deps.maxJsonDepth + ENVELOPE_DEPTH + (mode === 'dynamic' ? 1 : 0));
    } catch (err) {
      const problem = mcpProblemOf(err, log, getRequestId(c));
      if (problem.code !== 'malformed_json') return problemResponse(c, problem);
      return jsonRpcError(400, -32700, `Parse error: ${problem.detail}`, { code: problem.code });
    }
    const invalid = invalidRequest(parsed);
    if (invalid) return jsonRpcError(400, INVALID_REQUEST, invalid);
    const messages = (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
    const calls = takeToolCalls(messages, mode === 'dynamic' ? (name) => dynamic!.has(name) : (name) => byName.has(name));
    // Every tools/call spends one unit of the credential's limit; the request itself spent one.
    if (calls.length > 1 && deps.spendRateLimit) {
      try {
        await deps.spendRateLimit(c, principal, calls.length - 1);
      } catch (err) {
        return problemResponse(c, mcpProblemOf(err, log, getRequestId(c)));
      }
    }
    // Serve only the contract's protocol versions: an initialize asking for another one is
    // answered with our newest (the client then decides), a later request naming one is refused.
    const headerVersion = c.req.header('mcp-protocol-version');
    if (headerVersion !== undefined && !protocolVersions.includes(headerVersion)) {
      return jsonRpcError(400, -32000, `Bad Request: Unsupported protocol version: ${headerVersion} (supported versions: ${protocolVersions.join(', ')})`);
    }
    for (const message of messages) {
      if (message.method === 'initialize' && isPlainObject(message.params)) {
        const asked = message.params.protocolVersion;
        if (typeof asked !== 'string' || !protocolVersions.includes(asked)) message.params.protocolVersion = protocolVersions[0];
      }
    }

    // One tools/call, the commonest request by far, is answered here without the SDK's transport and
    // Server (their per-request setup cost more than the call: docs/performance-reads.md). The answer
    // is the SDK's own: the same checks passed, the same JSON-RPC response, member for member.
    const direct = directCall(c, parsed, calls);
    if (direct) return direct(mode, principal);

    const pooled = takeServer(mode, { c, principal, calls });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await pooled.server.connect(transport);
      // With enableJsonResponse the body is complete when this resolves.
      return await transport.handleRequest(c.req.raw, { parsedBody: parsed });
    } finally {
      // Released on the next turn of the event loop: the SDK forgets a finished handler only after
      // its response is sent, and closing before that aborts the handler's signal (a DOMException
      // and an abort event per call, in the profile of issue 16).
      setImmediate(() => void releaseServer(mode, pooled));
    }
  });

  // Stateless: no server-initiated SSE stream (GET) and no session to delete (DELETE).
  app.on(['GET', 'DELETE', 'PUT', 'PATCH'], MCP_PATH, (c) =>
    originRefused(c) ??
    problemResponse(
      c,
      new ProblemError('method_not_allowed', `${c.req.method} is not served on ${MCP_PATH}: this MCP server is stateless; send JSON-RPC with POST.`),
      { Allow: 'POST' },
    ),
  );
}
