// search.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';
import type { SearchHandlers } from '../generated/handlers/search.ts';

export const searchHandlers = {
  'search.query': notImplemented('search.query'),
} satisfies SearchHandlers;
