// actions.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';
import type { ActionsHandlers } from '../generated/handlers/actions.ts';

export const actionsHandlers = {
  'actions.list': notImplemented('actions.list'),
} satisfies ActionsHandlers;
