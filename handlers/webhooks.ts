// webhooks.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const webhooksHandlers = {
  'webhooks.endpoints.list': notImplemented('webhooks.endpoints.list'),
  'webhooks.endpoints.get': notImplemented('webhooks.endpoints.get'),
  'webhooks.deliveries.list': notImplemented('webhooks.deliveries.list'),
  'webhooks.endpoint.create': notImplemented('webhooks.endpoint.create'),
  'webhooks.endpoint.update': notImplemented('webhooks.endpoint.update'),
  'webhooks.endpoint.delete': notImplemented('webhooks.endpoint.delete'),
  'webhooks.endpoint.rotate_secret': notImplemented('webhooks.endpoint.rotate_secret'),
  'webhooks.endpoint.test': notImplemented('webhooks.endpoint.test'),
  'webhooks.delivery.replay': notImplemented('webhooks.delivery.replay'),
};
