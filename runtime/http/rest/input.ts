// REST request -> the operation's input object: path parameters, query string and JSON body merged,
// each property only from the place the contract says it travels. Body checks: size limit (413),
// JSON media type (415), strict JSON (400 malformed_json: syntax, invalid UTF-8, duplicate names;
// 422 past limits.maxJsonDepth; pipeline/json.ts, shared with MCP), an object (422).
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { OperationDef } from '../../contract-types.ts';
import { ProblemError, type FieldError } from '../../problem-error.ts';
import { coerceParams, validationFailed } from '../../pipeline/validate.ts';
import { decodeUtf8, parseStrictJson } from '../../pipeline/json.ts';
import type { Controls } from '../../pipeline/types.ts';

const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);

function tooLarge(max: number): ProblemError {
  return new ProblemError('payload_too_large', `The request body is larger than ${max} bytes.`);
}

/** The Node request under @hono/node-server, when its body has not been touched (null under app.request). */
function untouchedIncoming(c: Context): IncomingMessage | null {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming && typeof incoming.on === 'function' && !incoming.readableDidRead ? incoming : null;
}

/** Reads a Node request's body, refusing it once it passes max bytes; what is left is drained by the server. */
function readIncoming(incoming: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = (): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total > max) {
        done();
        incoming.pause();
        reject(tooLarge(max));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    };
    const onError = (err: Error): void => {
      done();
      reject(err);
    };
    const onAborted = (): void => onError(new Error('Client connection prematurely closed.'));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('aborted', onAborted);
  });
}

/** Reads a web Request's body (app.request in tests), with the same limit. */
async function readRequest(request: Request, max: number): Promise<Buffer> {
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Reads the body as text, refusing it once it passes max bytes (whatever Content-Length says), and
 * refusing bytes that are not UTF-8 (400 malformed_json) rather than replacing them. On a real
 * server it reads the Node request directly: materialising a web Request and its stream cost more
 * than the rest of an MCP call (the profile of issue 16).
 */
export async function readLimitedBody(c: Context, max: number): Promise<string> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > max) throw tooLarge(max);
  const incoming = untouchedIncoming(c);
  return decodeUtf8(incoming ? await readIncoming(incoming, max) : await readRequest(c.req.raw, max));
}

export function isJsonMediaType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

async function bodyOf(c: Context, max: number, maxDepth: number): Promise<Record<string, unknown>> {
  const text = await readLimitedBody(c, max);
  const contentType = c.req.header('content-type');
  if (text.trim() === '') {
    if (contentType && !isJsonMediaType(contentType)) {
      throw new ProblemError('unsupported_media_type', `Send the body as application/json, not ${contentType.split(';')[0]}.`);
    }
    return {};
  }
  if (!isJsonMediaType(contentType)) {
    throw new ProblemError(
      'unsupported_media_type',
      contentType ? `Send the body as application/json, not ${contentType.split(';')[0]}.` : 'Send the body with Content-Type: application/json.',
    );
  }
  const parsed = parseStrictJson(text, maxDepth);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw validationFailed([{ pointer: '', message: 'the body must be a JSON object' }]);
  }
  return parsed as Record<string, unknown>;
}

function misplaced(name: string, where: string): FieldError {
  return { pointer: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: `travels in the ${where}, not here` };
}

const PLACE = { path: 'path', query: 'query string', body: 'JSON body' } as const;

/** Where the contract says a property travels; only the operation's own names (never `__proto__`'s). */
function placeOf(op: OperationDef, name: string): keyof typeof PLACE | undefined {
  return Object.hasOwn(op.params, name) ? (op.params[name] as keyof typeof PLACE) : undefined;
}

/** path + query + body -> input (query and path strings coerced by op.paramTypes). */
export async function gatherInput(c: Context, op: OperationDef, maxBodyBytes: number, maxDepth: number): Promise<Record<string, unknown>> {
  const errors: FieldError[] = [];
  const pathRaw: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.req.param() as Record<string, string>)) pathRaw[name] = value;
  const queryRaw: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [name, values] of Object.entries(c.req.queries())) {
    const where = placeOf(op, name);
    if (where && where !== 'query') errors.push(misplaced(name, PLACE[where]));
    else queryRaw[name] = values;
  }
  let body: Record<string, unknown> = {};
  if (BODY_METHODS.has(c.req.method)) {
    body = await bodyOf(c, maxBodyBytes, maxDepth);
    for (const name of Object.keys(body)) {
      const where = placeOf(op, name);
      if (where && where !== 'body') errors.push(misplaced(name, PLACE[where]));
    }
  }
  if (errors.length > 0) throw validationFailed(errors);
  return { ...body, ...coerceParams(op, queryRaw), ...coerceParams(op, pathRaw) };
}

/** Idempotency-Key, If-Match and Prefer: dry-run headers -> the request controls. */
export function controlsOf(c: Context): Controls {
  const prefer = c.req.header('prefer') ?? '';
  const dryRun = prefer
    .split(',')
    .map((p) => p.split(';')[0]!.trim().toLowerCase())
    .includes('dry-run');
  return {
    idempotencyKey: c.req.header('idempotency-key') ?? null,
    ifMatch: c.req.header('if-match') ?? null,
    dryRun,
  };
}
