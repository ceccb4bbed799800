// Placeholder bodies for operations nobody has written yet. Each answers 501 not_implemented and
// carries a marker, so `svc lint` (and tests) can list the operations still unimplemented.
import type { HandlerContext } from '../handler-types.ts';
import { ProblemError } from '../problem-error.ts';

export const NOT_IMPLEMENTED: unique symbol = Symbol.for('svc.notImplemented');

export type NotImplementedHandler = ((input: unknown, ctx: HandlerContext) => Promise<never>) & {
  readonly [NOT_IMPLEMENTED]: string;
};

/** A handler for operationId that throws ProblemError('not_implemented'). */
export function notImplemented(operationId: string): NotImplementedHandler {
  const handler = async (_input: unknown, _ctx: HandlerContext): Promise<never> => {
    throw new ProblemError('not_implemented', `The operation ${operationId} is not implemented yet.`);
  };
  Object.defineProperty(handler, NOT_IMPLEMENTED, { value: operationId, enumerable: false });
  Object.defineProperty(handler, 'name', { value: `notImplemented(${operationId})` });
  return handler as NotImplementedHandler;
}

export function isNotImplemented(handler: unknown): handler is NotImplementedHandler {
  return typeof handler === 'function' && typeof (handler as Partial<NotImplementedHandler>)[NOT_IMPLEMENTED] === 'string';
}

/**
 * Operation ids whose handler is a notImplemented placeholder, sorted. Takes the handlers map
 * ({family: {operationKey: handler}}) or a flat {operationId: handler} map.
 */
export function unimplementedOperations(handlers: Record<string, unknown>): string[] {
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (isNotImplemented(value)) found.push(value[NOT_IMPLEMENTED]);
    else if (value && typeof value === 'object') for (const v of Object.values(value)) visit(v);
  };
  visit(handlers);
  return [...new Set(found)].sort();
}
