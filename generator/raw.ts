// Plain-data helpers over the parsed YAML (shared by check and model).

export type Obj = Record<string, unknown>;

export function isObj(x: unknown): x is Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export function asObj(x: unknown): Obj {
  return isObj(x) ? x : {};
}

export function asArray(x: unknown): unknown[] {
  return Array.isArray(x) ? x : [];
}

export function strings(x: unknown): string[] {
  return asArray(x).filter((v): v is string => typeof v === 'string');
}

export const OPERATION_ID = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
export const HTTP_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;
export const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);

/** `{task_id}` names in a contract path, in order. */
export function pathParams(p: string): string[] {
  return [...p.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
}

/** A path with its parameter names erased, so /x/{a} and /x/{b} compare equal. */
export function routeShape(method: string, p: string): string {
  return `${method.toUpperCase()} ${p.replace(/\{[^}]*\}/g, '{}')}`;
}

/** `tasks.endpoint.rotate_secret` -> `TasksEndpointRotateSecret`. */
export function pascal(id: string): string {
  return id
    .split(/[._-]/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

/** The top-level properties of an operation input, resolving a top-level $ref and allOf. */
export function inputProperties(input: unknown, schemas: Map<string, unknown>, seen = new Set<string>()): {
  properties: Obj;
  required: string[];
} {
  const node = asObj(input);
  const properties: Obj = {};
  const required: string[] = [];
  if (typeof node.$ref === 'string' && schemas.has(node.$ref) && !seen.has(node.$ref)) {
    seen.add(node.$ref);
    const inner = inputProperties(schemas.get(node.$ref), schemas, seen);
    Object.assign(properties, inner.properties);
    required.push(...inner.required);
  }
  for (const part of asArray(node.allOf)) {
    const inner = inputProperties(part, schemas, seen);
    Object.assign(properties, inner.properties);
    required.push(...inner.required);
  }
  Object.assign(properties, asObj(node.properties));
  required.push(...strings(node.required));
  return { properties, required: [...new Set(required)] };
}
