// keys.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const keysHandlers = {
  'keys.list': notImplemented('keys.list'),
  'keys.create': notImplemented('keys.create'),
  'keys.rotate': notImplemented('keys.rotate'),
  'keys.revoke': notImplemented('keys.revoke'),
};
