// Problem responses on REST: application/problem+json, Retry-After where a time applies, and on 401
// the WWW-Authenticate challenge pointing at the /mcp protected-resource metadata (the SDK client
// takes its token audience from that document's `resource`).
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { PROBLEM_MEDIA_TYPE, problemBody, problemHeaders, toProblemError } from '../../problem-documents.ts';

/** The path as received (before the custom-method rewrite), for `instance` and audit. */
export function requestPath(c: Context): string {
  const url = c.req.url;
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start < 0) return '/';
  const end = url.search(/[?#]/);
  return url.slice(start, end > start ? end : undefined);
}

export function wwwAuthenticate(baseUrl: string, code: string): string {
  const challenge = `Bearer resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp"`;
  return code === 'invalid_token' ? `${challenge}, error="invalid_token"` : challenge;
}

export function problemResponse(c: Context<AppEnv>, err: unknown, baseUrl: string, extra: Record<string, unknown> = {}): Response {
  const problem = toProblemError(err);
  const requestId = c.get('requestId') ?? 'unknown';
  const body = { ...problemBody(problem, requestPath(c), requestId, baseUrl) };
  for (const [k, v] of Object.entries(extra)) if (!(k in body)) body[k] = v;
  const headers = new Headers(problemHeaders(problem));
  headers.set('Content-Type', PROBLEM_MEDIA_TYPE);
  if (body.status === 401) headers.set('WWW-Authenticate', wwwAuthenticate(baseUrl, body.code));
  return new Response(JSON.stringify(body), { status: body.status, headers });
}
