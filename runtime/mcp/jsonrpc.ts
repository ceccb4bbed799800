// JSON-RPC checks of /mcp made before the SDK sees a message, so that the error codes are the
// specification's: well-formed JSON that is not a JSON-RPC message (or an empty batch) is -32600
// Invalid Request; a tools/call without a name, with arguments that are not an object, or naming a
// tool that does not exist is -32602 Invalid params with a readable message.
//
// The SDK re-reads tools/call params with zod, which drops a `__proto__` member of the arguments
// (it assigns into a plain object). So each tools/call is taken out here: its params are replaced
// by a reference (`name` = CALL_REF + index) and the handler reads the arguments as they arrived,
// the same object the REST body reader would have produced.

export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;

/** A JSON-RPC error a request handler throws: the SDK answers it with this code and message as they are. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Prefix of the stand-in tool name that refers to a taken-out tools/call. */
const CALL_REF = '\u0000svc-call:';

export interface TakenCall {
  name: string;
  arguments: unknown;
  /** Set when the call is refused with -32602 before it runs. */
  refusal: string | null;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validId(id: unknown): boolean {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/** Why a value is not a JSON-RPC 2.0 message MCP accepts, or null when it is one. */
export function invalidMessage(message: unknown): string | null {
  if (!isPlainObject(message)) return 'a JSON-RPC message is an object';
  if (message.jsonrpc !== '2.0') return 'a JSON-RPC message has "jsonrpc": "2.0"';
  if ('method' in message) {
    if (typeof message.method !== 'string' || message.method === '') return '"method" is a non-empty string';
    if ('id' in message && !validId(message.id)) return '"id" is a string or an integer (never null)';
    if ('params' in message && !isPlainObject(message.params)) return '"params" is an object';
    return null;
  }
  if (!validId(message.id)) return 'a response has an "id" that is a string or an integer';
  if (('result' in message) === ('error' in message)) return 'a response has exactly one of "result" and "error"';
  return null;
}

/** A body -> the reason it is an Invalid Request (naming the batch entry), or null. */
export function invalidRequest(parsed: unknown): string | null {
  if (Array.isArray(parsed)) {
    if (parsed.length === 0) return 'Invalid Request: an empty batch holds no message';
    for (let i = 0; i < parsed.length; i++) {
      const why = invalidMessage(parsed[i]);
      if (why) return `Invalid Request: batch entry ${i}: ${why}`;
    }
    return null;
  }
  const why = invalidMessage(parsed);
  return why ? `Invalid Request: ${why}` : null;
}

/** Why a tools/call's params cannot be run, or null. `known` says whether a tool name exists. */
function refusalOf(params: Record<string, unknown> | undefined, known: (name: string) => boolean): string | null {
  if (!params) return 'tools/call needs params with the tool "name" and its "arguments"';
  if (typeof params.name !== 'string' || params.name === '') return 'tools/call needs params.name, the name of a tool (a string)';
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) {
    return `params.arguments must be an object of the tool's arguments, not ${Array.isArray(params.arguments) ? 'an array' : params.arguments === null ? 'null' : `a ${typeof params.arguments}`}`;
  }
  if (!known(params.name)) return `Unknown tool: ${JSON.stringify(params.name.slice(0, 100))}. tools/list lists the tools you may call.`; // not a contract limit: echo length
  return null;
}

/**
 * Takes every tools/call request out of the (already valid) messages, rewriting its params to a
 * reference the handler resolves with `resolveCall`. Returns the taken calls, in order.
 */
export function takeToolCalls(messages: Record<string, unknown>[], known: (name: string) => boolean): TakenCall[] {
  const calls: TakenCall[] = [];
  for (const message of messages) {
    if (message.method !== 'tools/call' || !('id' in message)) continue;
    const params = message.params as Record<string, unknown> | undefined;
    calls.push({
      name: typeof params?.name === 'string' ? params.name : '',
      arguments: params?.arguments,
      refusal: refusalOf(params, known),
    });
    const ref: Record<string, unknown> = { name: `${CALL_REF}${calls.length - 1}`, arguments: {} };
    if (params && isPlainObject(params._meta)) ref._meta = params._meta;
    message.params = ref;
  }
  return calls;
}

/** The taken call a stand-in name refers to, or null when the name is not a reference. */
export function resolveCall(calls: readonly TakenCall[], name: string): TakenCall | null {
  if (!name.startsWith(CALL_REF)) return null;
  return calls[Number(name.slice(CALL_REF.length))] ?? null;
}
