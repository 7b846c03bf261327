// The upstream identity providers a person signs in with, behind one interface: after consent
// the browser is sent to `authorizeUrl`; at our callback `finish` checks the provider's answer
// and returns who signed in. Everything a provider needs between the two (PKCE verifier, nonce)
// is kept server-side by the OAuth library's upstream transaction, never in the browser.

/** Where every upstream identity provider sends the browser back (MCP and web sign-ins alike). */
export const CALLBACK_PATH = '/oauth/callback';

export interface UpstreamIdentity {
  /** Stable, provider-scoped id; becomes the grant's userId (must not contain ':'). */
  userId: string;
  /** Login or preferred user name, for display and principal matching. */
  login?: string;
  email?: string;
  name?: string;
  /** Groups (OIDC claim, GitHub org/team slugs) for ALLOWED_GROUPS and policy principals. */
  groups: string[];
}

/** Data kept with the upstream transaction between the redirect and the callback. */
export type UpstreamData = Record<string, string>;

export interface UpstreamIdp {
  readonly kind: 'dev' | 'oidc' | 'github';
  /** Fresh per-sign-in secrets (PKCE verifier, nonce) to keep until the callback. */
  prepare(): Promise<UpstreamData>;
  /** Where to send the browser; `state` binds the callback to this browser and transaction. */
  authorizeUrl(data: UpstreamData, state: string, callbackUrl: string): Promise<string>;
  /**
   * Verifies the provider's answer at the callback (code exchange, ID token signature, audience,
   * expiry, nonce...) and returns the identity. Throws `IdpError` with a message safe to show.
   */
  finish(callback: Request, data: UpstreamData, callbackUrl: string): Promise<UpstreamIdentity>;
}

/** A sign-in that failed at or with the provider; `message` is safe to show to the user. */
export class IdpError extends Error {
  override readonly name = 'IdpError';
}
