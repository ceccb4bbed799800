// The dynamic MCP mode (POST /mcp?mode=dynamic): the meta-tools of service.mcpDynamicTools (svc.yaml
// mcpDynamic) instead of every operation tool. Each is run by the implementation of its role, built
// once at mount over what the static mode already has: the tool table, the published definitions,
// the caller's tools/list (what it may call) and `run`, the function the static tools/call runs.
//
//   search   {query}            ranked tools the caller may call (runtime/mcp/search.ts)
//   describe {tool}             the tool's definition as the static tools/list gives it, + tier, scope, idempotency
//   read     {tool, arguments}  run a read exactly as its static tools/call; a command is refused
//   invoke   {tool, arguments}  run any tool exactly as its static tools/call
//
// A tool that does not exist and a tool the caller may not call (audience, scopes, switches) get the
// same not_found, so nothing reveals which names exist. Meta-tool arguments are validated against the
// published input schema (validation_failed naming the field, as every tool's input is).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpDynamicRole, McpDynamicToolDef } from '../contract-types.ts';
import { fieldErrors } from '../pipeline/validate.ts';
import { invalidField, ProblemError, validationFailed } from '../problem-error.ts';
import { ToolSearch, type SearchDocument } from './search.ts';
import type { ToolEntry } from './tool-entry.ts';

// ajv-formats is CommonJS whose module.exports is the function (NodeNext types see only .default).
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as typeof addFormatsModule.default;

/** What a meta-tool needs from the request it serves. */
export interface DynamicCall {
  /** Whether the caller's static tools/list holds this name (canonical or alias). */
  callable(name: string): boolean;
  /** Runs a tool the caller may call, exactly as the static tools/call does (same pipeline, same result). */
  run(entry: ToolEntry, args: unknown): Promise<CallToolResult>;
  /** Records (audit) that read/invoke refused an existing tool the caller may not call. */
  refused(entry: ToolEntry): void;
  /** A successful meta-tool answer: {outcome: "ran", result: body}, as a read tool's. */
  answer(body: unknown): CallToolResult;
}

export interface DynamicModeOptions {
  tools: readonly McpDynamicToolDef[];
  /** The static tool table, underscore aliases included when they are on. */
  entries: readonly ToolEntry[];
  /** Tool name -> its definition as the static tools/list publishes it. */
  published: ReadonlyMap<string, Tool>;
  /** List the meta-tools under their underscore aliases (SVC_MCP_UNDERSCORE_ALIASES). */
  aliases: boolean;
  /** limits.mcpSearchMaxResults. */
  searchMax: number;
  /** Each family's description (the OpenAPI tags'), searched with its tools. */
  familyDescriptions: Readonly<Record<string, string>>;
  /** What is switched off on this service (runtime/pipeline/access.ts switchedOff), said in every refusal, not per tool. */
  switchedOff: () => readonly string[];
  /** The agent guide's address, for the instructions. */
  guideUrl: string;
  serverVersion: string;
}

export interface DynamicMode {
  /** The dynamic tools/list (the same for every caller). */
  list: Tool[];
  /** Whether a tools/call name is a meta-tool of this mode. */
  has(name: string): boolean;
  instructions: string;
  /** Runs the meta-tool `name`; a ProblemError it throws is the tool's isError result. */
  call(name: string, args: unknown, ctx: DynamicCall): Promise<CallToolResult>;
}

interface Meta {
  def: McpDynamicToolDef;
  validate: ValidateFunction;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The text the search ranks a tool by: the contract's own words for it. */
export function searchDocument(entry: ToolEntry, familyDescriptions: Readonly<Record<string, string>>): SearchDocument {
  const { def, op } = entry;
  return {
    name: entry.name,
    fields: [
      { text: familyDescriptions[op.family] ?? '', weight: 0.5 },
      // The tool's name without the contract's prefix (service.mcpToolPrefix): its operation id.
      { text: op.id, weight: 3 },
      { text: def.title, weight: 3 },
      { text: op.family, weight: 1.5 },
      { text: def.description === def.title ? '' : def.description, weight: 1 },
    ],
  };
}

export function createDynamicMode(options: DynamicModeOptions): DynamicMode {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const listedName = (name: string) => (options.aliases ? name.replace(/\./g, '_') : name);
  const metas = new Map<string, Meta>();
  const byRole = new Map<McpDynamicRole, string>();
  const list: Tool[] = [];
  for (const def of options.tools) {
    const meta = { def, validate: ajv.compile(def.inputSchema) };
    metas.set(def.name, meta);
    if (options.aliases) metas.set(def.name.replace(/\./g, '_'), meta);
    byRole.set(def.role, def.name);
    list.push({
      name: listedName(def.name),
      title: def.title,
      description: def.description,
      inputSchema: def.inputSchema as Tool['inputSchema'],
      outputSchema: def.outputSchema as Tool['outputSchema'],
      annotations: { ...def.annotations },
    });
  }
  const roleName = (role: McpDynamicRole) => byRole.get(role) ?? role;

  const byName = new Map(options.entries.map((e) => [e.name, e]));
  const canonical = options.entries.filter((e) => !e.alias);
  const index = new ToolSearch(canonical.map((e) => searchDocument(e, options.familyDescriptions)));
  /** The one answer for a name that is no tool, or no tool this caller may call. */
  function notCallable(name: string): ProblemError {
    const note = options.switchedOff().map((s) => ` ${s[0]!.toUpperCase()}${s.slice(1)}.`).join('');
    return new ProblemError('not_found', `No tool named ${JSON.stringify(name)} is available to you; ${roleName('search')} finds the tools you may call.${note}`, {
      errors: [{ pointer: '/tool', message: 'is not a tool you may call' }],
    });
  }

  /** The tool named by a describe/read/invoke call, when the caller may call it. */
  function callableEntry(name: string, ctx: DynamicCall, audit: boolean): ToolEntry {
    const entry = byName.get(name);
    if (entry && ctx.callable(entry.name)) return entry;
    if (entry && audit) ctx.refused(entry);
    throw notCallable(name);
  }

  const roles: Record<McpDynamicRole, (args: Record<string, unknown>, ctx: DynamicCall) => Promise<CallToolResult>> = {
    async search(args, ctx) {
      const names = index.search(String(args.query), (name) => ctx.callable(name), options.searchMax);
      const tools = names.map((name) => {
        const { def, op } = byName.get(name)!;
        return { name, summary: def.title, kind: op.kind, tier: op.tier, scope: op.scope };
      });
      return ctx.answer({ tools });
    },
    async describe(args, ctx) {
      const entry = callableEntry(String(args.tool), ctx, false);
      return ctx.answer({ tool: options.published.get(entry.name), tier: entry.op.tier, scope: entry.op.scope, idempotency: entry.op.idempotency });
    },
    async read(args, ctx) {
      const entry = callableEntry(String(args.tool), ctx, true);
      if (entry.op.kind !== 'read') throw invalidField('/tool', `is a command; ${roleName('read')} runs reads only: call it with ${roleName('invoke')}`);
      return ctx.run(entry, args.arguments);
    },
    async invoke(args, ctx) {
      return ctx.run(callableEntry(String(args.tool), ctx, true), args.arguments);
    },
  };

  const instructions =
    `Meta-tools of the svc Platform API (contract ${options.serverVersion}), for agents that cannot take every tool's definition. ` +
    `${roleName('search')} {query} finds the tools you may call; ${roleName('describe')} {tool} gives one tool's definition ` +
    `(inputSchema, annotations, tier, scope); ${roleName('read')} {tool, arguments} runs a read; ${roleName('invoke')} {tool, arguments} ` +
    'runs any tool, commands too (plan a write with dryRun; creating tools need an idempotencyKey). A result through them is ' +
    'exactly the tool\'s own: it says whether the operation ran, was planned or was proposed for approval; a failure is a ' +
    `result with isError and the problem code. Start with ${roleName('read')} {"tool":"svc.meta.get"}: your scopes and client scope. ` +
    `Guide: ${options.guideUrl} (also the resource of that address).`;

  return {
    list,
    has: (name) => metas.has(name),
    instructions,
    async call(name, args, ctx) {
      const meta = metas.get(name);
      if (!meta) throw new ProblemError('not_found', `There is no meta-tool named ${JSON.stringify(name)}.`);
      if (args !== undefined && !isPlainObject(args)) throw validationFailed([{ pointer: '', message: 'must be an object' }], 'The tool arguments must be an object.');
      const input = args ?? {};
      if (!meta.validate(input)) throw validationFailed(fieldErrors(meta.validate.errors));
      return roles[meta.def.role](input, ctx);
    },
  };
}
