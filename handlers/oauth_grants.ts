// oauth_grants.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const oauthGrantsHandlers = {
  'oauth_grants.list': notImplemented('oauth_grants.list'),
  'oauth_grants.revoke': notImplemented('oauth_grants.revoke'),
};
