// clients.*: clients.memberships.list is built (handlers/memberships.ts); the others answer 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';
import { listClientMemberships } from './memberships.ts';

export const clientsHandlers = {
  'clients.list': notImplemented('clients.list'),
  'clients.get': notImplemented('clients.get'),
  'clients.summary': notImplemented('clients.summary'),
  'clients.health': notImplemented('clients.health'),
  'clients.launch_readiness': notImplemented('clients.launch_readiness'),
  'clients.memberships.list': listClientMemberships,
  'clients.publish_hub': notImplemented('clients.publish_hub'),
};
