// Turns what went wrong in an OpenID Connect sign-in (oauth4webapi errors, the provider's OAuth
// error codes) into an IdpError whose message a user may see: it names the failed check and
// never carries a token, a code or a secret. Network failures arrive as IdpErrors already.

import { logLine } from '../log';
import * as oauth from 'oauth4webapi';
import { IdpError } from './idp';

const VERIFY = 'The sign-in could not be verified: ';
const CHECK_CLIENT = 'check OIDC_CLIENT_ID and OIDC_CLIENT_SECRET';

/** Provider codes are echoed only when they look like OAuth codes: a callback URL is forgeable. */
const safeCode = (code: string): string =>
  /^[a-z0-9_.-]{1,64}$/i.test(code) ? code : 'unknown_error';

function causeField(err: { cause?: unknown }, key: string): unknown {
  const cause = err.cause;
  if (!cause || typeof cause !== 'object' || !(key in cause)) return undefined;
  return (cause as Record<string, unknown>)[key];
}

/** For logs: the error's name, oauth4webapi code and message, never its cause (tokens live there). */
export function describeOidcError(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown';
  const code = 'code' in err && typeof err.code === 'string' ? ` ${err.code}` : '';
  return `${err.name}${code}: ${err.message}`;
}

/** Messages for the ID token checks, by oauth4webapi error code and the claim it names. */
const CLAIM_MESSAGES: Record<string, Record<string, string>> = {
  [oauth.JWT_CLAIM_COMPARISON]: {
    aud: 'the ID token was issued for another application (audience)',
    azp: 'the ID token was issued for another application (audience)',
    iss: 'the ID token was issued by another identity provider (issuer)',
    nonce: 'the ID token does not belong to this sign-in (nonce)',
  },
  [oauth.JWT_TIMESTAMP_CHECK]: {
    exp: 'the ID token has expired (are the clocks right?)',
    nbf: 'the ID token is not valid yet (are the clocks right?)',
  },
};

/**
 * Maps what went wrong to a message a user may see. oauth4webapi's own messages are fixed
 * strings (the values it compared sit in `cause`), so an unmapped one is passed on as it is.
 */
export function oidcErrorFrom(
  err: unknown,
  stage: 'discovery' | 'callback',
  issuer: string,
): IdpError {
  if (err instanceof IdpError) return err;
  if (err instanceof oauth.AuthorizationResponseError) {
    return new IdpError(`The identity provider refused the sign-in: ${safeCode(err.error)}.`);
  }
  if (err instanceof oauth.ResponseBodyError) {
    const code = safeCode(err.error);
    if (code === 'invalid_client' || code === 'unauthorized_client') {
      return new IdpError(
        `The identity provider rejected this server's client credentials (${code}); ${CHECK_CLIENT}.`,
      );
    }
    if (code === 'invalid_grant') {
      return new IdpError(
        'The identity provider did not accept the authorization code (invalid_grant); it may have expired or been used. Please sign in again.',
      );
    }
    return new IdpError(
      `The identity provider refused the token request: ${code} (HTTP ${err.status}).`,
    );
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    return new IdpError(
      `The identity provider rejected this server's client credentials (HTTP ${err.status}); ${CHECK_CLIENT}.`,
    );
  }
  if (
    !(err instanceof oauth.OperationProcessingError) &&
    !(err instanceof oauth.UnsupportedOperationError)
  ) {
    logLine('error', 'oidc_unexpected_error', { reason: describeOidcError(err) });
    return new IdpError(`${VERIFY}an unexpected error occurred.`);
  }
  const status = causeField(err, 'status');
  if (stage === 'discovery') return discoveryError(err, issuer, status);

  const claim = causeField(err, 'claim');
  const message = typeof claim === 'string' ? CLAIM_MESSAGES[err.code ?? '']?.[claim] : undefined;
  if (message) return new IdpError(`${VERIFY}${message}.`);
  if (err.code === oauth.KEY_SELECTION) {
    return new IdpError(
      `${VERIFY}the ID token is signed with a key the identity provider does not publish.`,
    );
  }
  if (err.message === 'JWT signature verification failed') {
    return new IdpError(`${VERIFY}the ID token's signature is invalid.`);
  }
  if (err.message.includes('"iss" (issuer) response parameter')) {
    return new IdpError(`${VERIFY}the answer came from another identity provider (iss).`);
  }
  if (err.code === oauth.RESPONSE_IS_NOT_CONFORM && typeof status === 'number') {
    return new IdpError(`The identity provider answered the token request with HTTP ${status}.`);
  }
  return new IdpError(`${VERIFY}${err.message}.`);
}

function discoveryError(
  err: oauth.OperationProcessingError | oauth.UnsupportedOperationError,
  issuer: string,
  status: unknown,
): IdpError {
  if (err.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
    // The document's issuer is public and is what OIDC_ISSUER must say, to the character.
    const body = causeField(err, 'body');
    const named =
      body && typeof body === 'object' && 'issuer' in body
        ? String(body.issuer).slice(0, 200)
        : '?';
    return new IdpError(
      `The identity provider's discovery document names the issuer ${named}, not ${issuer}; set OIDC_ISSUER to exactly that.`,
    );
  }
  const where = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const why = typeof status === 'number' ? `it answered HTTP ${status}` : err.message;
  return new IdpError(
    `The identity provider's configuration could not be loaded from ${where}: ${why}.`,
  );
}
