// memberships.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const membershipsHandlers = {
  'memberships.invite': notImplemented('memberships.invite'),
  'memberships.revoke': notImplemented('memberships.revoke'),
};
