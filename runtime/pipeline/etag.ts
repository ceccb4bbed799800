// Strong ETags derived from a row's id and version: "<id>.v<version>". A PATCH sends it back in
// If-Match; only the strong quoted form matches (weak W/ tags never do, RFC 9110 strong comparison).
// A bare unquoted tag is tolerated, since MCP clients pass ifMatch as a plain argument.
// `If-Match: *` (any current version) is refused with 428: it would bypass lost-update protection
// (decision in contract/svc.yaml, problems.precondition_required).
import { ProblemError } from '../problem-error.ts';

export function etagFor(id: string, version: number): string {
  return `"${id}.v${version}"`;
}

/** The opaque part of an If-Match value, or null when it is weak or malformed. */
function opaque(tag: string): string | null {
  const t = tag.trim();
  if (t.startsWith('W/')) return null;
  if (t.startsWith('"')) return t.length >= 2 && t.endsWith('"') ? t.slice(1, -1) : null;
  return t.length > 0 && !t.includes('"') ? t : null;
}

/**
 * The one If-Match presence rule: 428 precondition_required when it is missing or blank (the
 * pipeline applies it to every `ifMatch: required` operation; handlers/shared.ts checkIfMatch to
 * a handler called directly), or when it is or lists `*` (refuseWildcardIfMatch).
 */
export function requireIfMatch(operationId: string, ifMatch: string | null | undefined): string {
  if (ifMatch == null || ifMatch.trim() === '') {
    throw new ProblemError('precondition_required', `${operationId} needs If-Match with the resource's current ETag.`);
  }
  refuseWildcardIfMatch(ifMatch);
  return ifMatch;
}

/** 428 precondition_required when an If-Match value is or lists `*`: a write must name the ETag it read. */
export function refuseWildcardIfMatch(ifMatch: string | null | undefined): void {
  if (ifMatch == null || !splitList(ifMatch).includes('*')) return;
  throw new ProblemError('precondition_required', 'If-Match: * is not accepted: send the ETag of the version you read, so that a lost update is refused.');
}

/**
 * True when the If-Match value matches the current ETag. Accepts a list ("a", "b"); `*` never
 * matches (refuseWildcardIfMatch answers it first). Strong comparison: W/ tags never match.
 */
export function etagMatches(ifMatch: string | null | undefined, current: string): boolean {
  if (ifMatch == null) return false;
  const want = opaque(current);
  if (want === null) return false;
  for (const part of splitList(ifMatch)) {
    if (opaque(part) === want) return true;
  }
  return false;
}

function splitList(value: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of value) {
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) {
      if (cur.trim()) parts.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) parts.push(cur.trim());
  return parts;
}
