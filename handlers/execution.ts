// execution.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const executionHandlers = {
  'execution.jobs.get': notImplemented('execution.jobs.get'),
  'execution.requests.propose': notImplemented('execution.requests.propose'),
};
