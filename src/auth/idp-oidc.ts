// Sign-in with any OpenID Connect provider found by its issuer URL (Cloudflare Access, Google,
// Okta, Entra ID, Keycloak, Auth0): authorization code flow with PKCE S256, nonce and state. The
// ID token is checked by oauth4webapi (JWKS signature, iss, aud, exp/iat, nonce) before any of
// its claims is read; every failure becomes an IdpError naming the check, never a token.

import { logLine } from '../log';
import { type Clock, systemClock } from '../clock';
import type { OidcSettings } from '../config';
import * as oauth from 'oauth4webapi';
import { IdpError, type UpstreamData, type UpstreamIdentity, type UpstreamIdp } from './idp';
import { endpointProblem, idpFetch, isLoopbackHttp, providerUrlProblem } from './idp-http';
import { describeOidcError, oidcErrorFrom } from './idp-oidc-errors';

/** The provider's settings, as ../config/sign-in.ts parses them. */
export type OidcConfig = OidcSettings;

/** Why this configuration cannot work (for /health or config checks), or undefined. */
export const oidcConfigProblem = (config: OidcConfig): string | undefined =>
  providerUrlProblem(config.issuer, 'OIDC_ISSUER');

/** Discovery is re-read after this; oauth4webapi keeps each JWKS (keyed by it) 5 minutes. */
const DISCOVERY_TTL_MS = 10 * 60_000;
const CLOCK_TOLERANCE_S = 30;
const ENDPOINTS = ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint'];

interface Discovered {
  as: oauth.AuthorizationServer;
  expires: number;
}
/** Per issuer, per isolate, so a sign-in does not re-fetch the metadata and JWKS each time. */
const discovered = new Map<string, Discovered>();

/** What every oauth4webapi call gets: our fetch, and plain http only for a loopback issuer. */
interface HttpOptions {
  [oauth.customFetch]: (url: string, init: RequestInit) => Promise<Response>;
  [oauth.allowInsecureRequests]?: boolean;
}

/** The provider's metadata, validated, from this isolate's cache while it is fresh. */
async function discover(
  config: OidcConfig,
  http: HttpOptions,
  loopback: boolean,
  clock: Clock,
): Promise<Discovered> {
  const problem = oidcConfigProblem(config);
  if (problem) throw new IdpError(`Sign-in is misconfigured: ${problem}.`);
  const cached = discovered.get(config.issuer);
  if (cached && cached.expires > clock.now()) return cached;
  const issuer = new URL(config.issuer);
  let as: oauth.AuthorizationServer;
  try {
    const response = await oauth.discoveryRequest(issuer, http);
    as = await oauth.processDiscoveryResponse(issuer, response);
  } catch (err) {
    throw oidcErrorFrom(err, 'discovery', config.issuer);
  }
  for (const key of ENDPOINTS) {
    if (key === 'userinfo_endpoint' && as[key] === undefined) continue;
    const bad = endpointProblem(as[key], key, loopback);
    if (bad) throw new IdpError(`The identity provider's discovery document is unusable: ${bad}.`);
  }
  const entry = { as, expires: clock.now() + DISCOVERY_TTL_MS };
  discovered.set(config.issuer, entry);
  return entry;
}

/** client_secret_basic is the OIDC default; post only when the provider rules basic out. */
function secretAuth(as: oauth.AuthorizationServer, secret: string): oauth.ClientAuth {
  const methods = as.token_endpoint_auth_methods_supported;
  const postOnly =
    Array.isArray(methods) &&
    !methods.includes('client_secret_basic') &&
    methods.includes('client_secret_post');
  return postOnly ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret);
}

export function oidcIdp(config: OidcConfig, clock: Clock = systemClock): UpstreamIdp {
  const loopback = isLoopbackHttp(config.issuer);
  const http: HttpOptions = {
    [oauth.customFetch]: (url, init) =>
      idpFetch(url, init, `The identity provider at ${new URL(url).host}`),
    ...(loopback ? { [oauth.allowInsecureRequests]: true } : {}),
  };
  const client: oauth.Client = {
    client_id: config.clientId,
    [oauth.clockTolerance]: CLOCK_TOLERANCE_S,
  };

  const metadata = (): Promise<Discovered> => discover(config, http, loopback, clock);
  const clientAuth = (as: oauth.AuthorizationServer) => secretAuth(as, config.clientSecret);

  return {
    kind: 'oidc',
    prepare: () =>
      Promise.resolve({
        code_verifier: oauth.generateRandomCodeVerifier(),
        nonce: oauth.generateRandomNonce(),
      }),

    async authorizeUrl(data, state, callbackUrl) {
      const { code_verifier: verifier, nonce } = transaction(data);
      const { as } = await metadata();
      const url = new URL(String(as.authorization_endpoint));
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', config.clientId);
      url.searchParams.set('redirect_uri', callbackUrl);
      url.searchParams.set('scope', config.scopes.join(' '));
      url.searchParams.set('state', state);
      url.searchParams.set('nonce', nonce);
      url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
      url.searchParams.set('code_challenge_method', 'S256');
      return url.href;
    },

    async finish(callback, data, callbackUrl) {
      const { code_verifier: verifier, nonce } = transaction(data);
      const entry = await metadata();
      try {
        // The OAuth library already matched `state` to this transaction (it found `data` by
        // it), so only the RFC 9207 `iss` and the `error` parameters are checked here.
        const url = new URL(callback.url);
        const params = oauth.validateAuthResponse(entry.as, client, url, oauth.skipStateCheck);
        const auth = clientAuth(entry.as);
        const response = await oauth.authorizationCodeGrantRequest(
          entry.as,
          client,
          auth,
          params,
          callbackUrl,
          verifier,
          http,
        );
        const tokens = await oauth.processAuthorizationCodeResponse(entry.as, client, response, {
          expectedNonce: nonce,
          requireIdToken: true,
        });
        await verifySignature(entry, response, http);
        const claims: Record<string, unknown> = { ...oauth.getValidatedIdTokenClaims(tokens) };
        const lacking = claimAt(claims, config.groupsClaim) === undefined || !('email' in claims);
        const extra =
          lacking && entry.as.userinfo_endpoint ? await userinfo(entry, client, tokens, http) : {};
        // The ID token wins where both speak: userinfo only fills in what the token left out.
        return identityFromClaims(
          { ...extra, ...claims },
          config.groupsClaim,
          config.trustEmail === true,
        );
      } catch (err) {
        throw oidcErrorFrom(err, 'callback', config.issuer);
      }
    },
  };
}

function transaction(data: UpstreamData): { code_verifier: string; nonce: string } {
  const { code_verifier, nonce } = data;
  if (!code_verifier || !nonce) {
    throw new IdpError(
      'The sign-in could not be verified: its transaction is incomplete. Please start again.',
    );
  }
  return { code_verifier, nonce };
}

/**
 * The ID token came straight from the token endpoint over TLS; we check its signature anyway.
 * oauth4webapi re-fetches a JWKS on an unknown `kid` only once its copy is a minute old, so right
 * after a key rotation we fetch once more through a fresh metadata object (the JWKS cache is
 * keyed by that object) and keep it, so later sign-ins use the new keys too.
 */
async function verifySignature(
  entry: Discovered,
  response: Response,
  http: HttpOptions,
): Promise<void> {
  try {
    await oauth.validateApplicationLevelSignature(entry.as, response, http);
  } catch (err) {
    if (!(err instanceof oauth.OperationProcessingError) || err.code !== oauth.KEY_SELECTION)
      throw err;
    const fresh = { ...entry.as };
    await oauth.validateApplicationLevelSignature(fresh, response, http);
    entry.as = fresh;
  }
}

/** Userinfo is a nicety: when it fails, the sign-in goes on with the ID token's claims. */
async function userinfo(
  entry: Discovered,
  client: oauth.Client,
  tokens: oauth.TokenEndpointResponse,
  http: HttpOptions,
): Promise<Record<string, unknown>> {
  const sub = oauth.getValidatedIdTokenClaims(tokens)?.sub ?? oauth.skipSubjectCheck;
  try {
    const response = await oauth.userInfoRequest(entry.as, client, tokens.access_token, http);
    const info = await oauth.processUserInfoResponse(entry.as, client, sub, response);
    if (response.headers.get('content-type')?.startsWith('application/jwt')) {
      await oauth.validateApplicationLevelSignature(entry.as, response, http);
    }
    return { ...info };
  } catch (err) {
    logLine('warn', 'oidc_userinfo_failed', { reason: describeOidcError(err) });
    return {};
  }
}

/** A claim by name, else by dotted path; a literal name wins (Auth0 claim names are URLs). */
export function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let node: unknown = claims;
  for (const key of name.split('.')) {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return undefined;
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() ? value.trim() : undefined;

/**
 * The identity in verified claims. The email counts only when the provider says it is verified
 * (some, like Cognito, send "true" as a string), or, with `trustEmail`, when it says nothing:
 * allow-lists, admins, approvers and policy principals match it. `preferred_username` is for
 * display only: users can often choose it.
 */
export function identityFromClaims(
  claims: Record<string, unknown>,
  groupsClaim: string,
  trustEmail = false,
): UpstreamIdentity {
  const sub = typeof claims.sub === 'string' ? claims.sub : '';
  if (!sub)
    throw new IdpError('The sign-in could not be verified: the ID token has no subject (sub).');
  const verified = claims.email_verified === true || claims.email_verified === 'true';
  const unstated = claims.email_verified === undefined || claims.email_verified === null;
  const email = verified || (unstated && trustEmail) ? text(claims.email) : undefined;
  const login = text(claims.preferred_username) ?? email;
  const name = text(claims.name) ?? text(claims.preferred_username);
  const raw = claimAt(claims, groupsClaim);
  const list: unknown[] = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  const groups = [...new Set(list.map(text).filter((g) => g !== undefined))];
  return {
    // Grants are stored under `userId:grantId`, so a ':' in a sub must not reach the userId.
    userId: encodeURIComponent(sub),
    ...(login ? { login } : {}),
    ...(email ? { email } : {}),
    ...(name ? { name } : {}),
    groups,
  };
}
