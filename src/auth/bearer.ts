// The person behind a bearer token this server issued, for this server (its audience is our
// public origin), whose grant still exists and who is still admitted; null otherwise. For the
// routes outside /mcp and /sse that scripts call with a token: /health's operator view, the
// policy API.

import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { Config } from '../config';
import { identityOfToken, type Identity } from '../core/identity';
import { publicOrigin, stillAdmitted } from './config';

/** The token of an `Authorization: Bearer` header, or null. */
export function bearerToken(request: Request): string | null {
  return /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '')?.[1] ?? null;
}

export interface BearerCaller {
  /** With the token's own scopes in `scopes`. */
  identity: Identity;
  /** The token's own scopes (a narrowed refresh holds fewer than its grant). */
  scope: readonly string[];
}

export async function bearerIdentity(
  config: Config,
  oauth: OAuthHelpers | undefined,
  request: Request,
): Promise<BearerCaller | null> {
  const token = bearerToken(request);
  if (!token || !oauth) return null;
  try {
    const summary = await oauth.unwrapToken(token);
    if (!summary || !audienceMatches(summary.audience, publicOrigin(config, request))) return null;
    // The token's scopes, never its grant's: the library keeps a narrowed refresh's on the token.
    const scope = summary.scope ?? [];
    const identity = identityOfToken(summary.grant.props, scope);
    return identity && stillAdmitted(config, identity) ? { identity, scope } : null;
  } catch {
    // A malformed token or a storage error: nobody, and no error that would tell tokens apart.
    return null;
  }
}

function audienceMatches(audience: string | string[] | undefined, resource: string): boolean {
  const list = audience === undefined ? [] : Array.isArray(audience) ? audience : [audience];
  const strip = (u: string): string => u.replace(/\/+$/, '');
  return list.some((a) => strip(a) === strip(resource));
}
