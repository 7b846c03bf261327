// The transport rules every call to an upstream identity provider follows: https only (plain
// http only to loopback, for tests and IdPs on this machine), a bounded wait, and a network
// failure reported as such in an IdpError, whatever the runtime calls it.

import { IdpError } from './idp';

export const IDP_TIMEOUT_MS = 10_000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function parse(value: unknown): URL | undefined {
  try {
    return new URL(String(value));
  } catch {
    return undefined;
  }
}

/** http to 127.0.0.1, localhost or ::1: the one place codes and tokens may travel unencrypted. */
export function isLoopbackHttp(value: string): boolean {
  const url = parse(value);
  return url?.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** Why `value` may not be configured as a provider URL (`name` is its variable), or undefined. */
export function providerUrlProblem(value: string, name: string): string | undefined {
  const url = parse(value);
  if (!url) return `${name} is not a URL`;
  if (url.username || url.password || url.search || url.hash) {
    return `${name} must not contain credentials, a query or a fragment`;
  }
  if (url.protocol === 'https:' || isLoopbackHttp(value)) return undefined;
  return `${name} must be an https URL (plain http only on 127.0.0.1, localhost or ::1)`;
}

/**
 * Why a URL a provider handed us (a discovery endpoint) may not be used. Unlike an issuer it may
 * carry a query (Entra B2C names its policy there); plain http only when the issuer is loopback.
 */
export function endpointProblem(
  value: unknown,
  key: string,
  loopbackOk: boolean,
): string | undefined {
  const url = parse(value);
  if (!url) return `${key} is missing or not a URL`;
  if (url.protocol === 'https:' || (loopbackOk && isLoopbackHttp(url.href))) return undefined;
  return `${key} is not an https URL`;
}

/**
 * fetch with a deadline (the caller's signal, else IDP_TIMEOUT_MS). Runtimes disagree on what a
 * network failure is (workerd: Error "Network connection lost.", Node: TypeError "fetch
 * failed"), so it is named here, the one place where it is certain the network failed.
 */
export async function idpFetch(url: string, init: RequestInit, who: string): Promise<Response> {
  try {
    return await fetch(url, {
      ...init,
      signal: init.signal ?? AbortSignal.timeout(IDP_TIMEOUT_MS),
    });
  } catch (err) {
    const late =
      err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError');
    throw new IdpError(`${who} ${late ? 'did not answer in time' : 'could not be reached'}.`);
  }
}
