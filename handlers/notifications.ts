// notifications.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const notificationsHandlers = {
  'notifications.list': notImplemented('notifications.list'),
  'notifications.read': notImplemented('notifications.read'),
};
