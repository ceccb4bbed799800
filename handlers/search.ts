// search.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const searchHandlers = {
  'search.query': notImplemented('search.query'),
};
