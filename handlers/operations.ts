// operations.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const operationsHandlers = {
  'operations.list': notImplemented('operations.list'),
  'operations.get': notImplemented('operations.get'),
  'operations.cancel': notImplemented('operations.cancel'),
};
