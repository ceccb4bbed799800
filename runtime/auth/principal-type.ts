// Who is calling, as every stage and handler sees it (built by auth/principal.ts). A leaf, so the
// policy (auth/policy.ts) and the handler types (handler-types.ts) both import it without a circle.
import type { PrincipalKind } from '../contract-types.ts';

export interface Principal {
  kind: PrincipalKind;
  /** The acting user's id (for an API key: its owner's). */
  id: string;
  loginMethod: 'api_key' | 'oauth';
  /** API key id, or the OAuth grant/token id. Never a secret. */
  credentialId: string;
  /** Live role label of the acting user (owner, admin, operator, viewer, or a membership role). */
  role: string;
  /** Effective scopes: granted ∩ what the live role allows. */
  scopes: ReadonlySet<string>;
  /** Clients in reach: all (operators without a client binding) or the listed ones. */
  clientScope: { all: boolean; clientIds: readonly string[] };
  /** OAuth client id when loginMethod is oauth. */
  oauthClientId: string | null;
  /** When the credential stops working, if it is known when it authenticates (an access token's exp). */
  expiresAt?: Date | null;
}
