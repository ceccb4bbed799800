// campaigns.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const campaignsHandlers = {
  'campaigns.list': notImplemented('campaigns.list'),
  'campaigns.propose_send': notImplemented('campaigns.propose_send'),
};
