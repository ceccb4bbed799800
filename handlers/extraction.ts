// extraction.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const extractionHandlers = {
  'extraction.get': notImplemented('extraction.get'),
};
