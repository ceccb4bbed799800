// clients.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const clientsHandlers = {
  'clients.list': notImplemented('clients.list'),
  'clients.get': notImplemented('clients.get'),
  'clients.summary': notImplemented('clients.summary'),
  'clients.health': notImplemented('clients.health'),
  'clients.launch_readiness': notImplemented('clients.launch_readiness'),
  'clients.memberships.list': notImplemented('clients.memberships.list'),
  'clients.publish_hub': notImplemented('clients.publish_hub'),
};
