// Custom methods (AIP-136) put a literal colon in a path segment: /v1/tasks:batch,
// /v1/tasks/{task_id}:complete. Hono reads ':' at the start of a segment as a parameter and cannot
// express "parameter followed by :verb" (hono#1301, #4562). So both sides agree on one rewrite:
// the generator registers `/v1/tasks/:task_id/~complete`, and the app's getPath rewrites the
// incoming `/v1/tasks/t1:complete` to the same shape before routing.

const VERB_MARK = '~';

/** Contract path (`/v1/tasks/{task_id}:complete`) -> Hono router path (`/v1/tasks/:task_id/~complete`). */
export function toRouterPath(contractPath: string): string {
  return contractPath
    .split('/')
    .map((segment) => {
      const colon = segment.indexOf(':', segment.startsWith('{') ? segment.indexOf('}') : 0);
      const base = colon >= 0 ? segment.slice(0, colon) : segment;
      const verb = colon >= 0 ? segment.slice(colon + 1) : null;
      const routed = base.replace(/^\{([A-Za-z0-9_]+)\}$/, ':$1');
      return verb === null ? routed : `${routed}/${VERB_MARK}${verb}`;
    })
    .join('/');
}

/**
 * Incoming raw path -> router path. A literal ':' splits a segment into resource and verb.
 * A raw segment that already starts with '~' could only be an attempt to reach a verb route
 * without the colon form, so it is made unroutable (404). An encoded colon (%3A) is not a
 * custom-method separator: it stays inside the segment as data, so `/v1/tasks/t1%3Acomplete`
 * is the task whose id is "t1:complete" (which fails Id validation), never the :complete verb.
 */
export function rewriteRequestPath(rawPath: string): string {
  // Most paths have neither a colon nor a segment starting with the mark: nothing to rewrite.
  if (!rawPath.includes(':') && !rawPath.includes(`/${VERB_MARK}`)) return rawPath;
  return rawPath
    .split('/')
    .map((segment) => {
      if (segment.startsWith(VERB_MARK)) return '\u0000unroutable';
      const colon = segment.indexOf(':');
      if (colon < 0) return segment;
      return `${segment.slice(0, colon)}/${VERB_MARK}${segment.slice(colon + 1)}`;
    })
    .join('/');
}
