// actions.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const actionsHandlers = {
  'actions.list': notImplemented('actions.list'),
};
