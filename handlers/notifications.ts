// notifications.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';
import type { NotificationsHandlers } from '../generated/handlers/notifications.ts';

export const notificationsHandlers = {
  'notifications.list': notImplemented('notifications.list'),
  'notifications.read': notImplemented('notifications.read'),
} satisfies NotificationsHandlers;
