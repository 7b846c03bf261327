// The OAuth 2.1 authorization server and resource guard, from @cloudflare/workers-oauth-provider:
// RFC 9728/8414 metadata, client ID metadata documents and dynamic registration, PKCE, tokens
// bound to this server's resource, refresh tokens, `iss` in authorization responses. One
// provider per public origin (PUBLIC_URL, or the request's own).

import { getOAuthApi, OAuthProvider, GrantType, type OAuthHelpers, type OAuthProviderOptions, type TokenExchangeCallbackOptions } from '@cloudflare/workers-oauth-provider';
import type { AppEnv } from '../env';
import { mcpApi } from '../mcp/route';
import { authApp } from './pages';

const ACCESS_TOKEN_TTL_S = 60 * 60;
const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * 60;
const REFRESH_IDLE_TTL_S = 7 * 24 * 60 * 60;
const MAX_CACHED = 16;

interface OriginAuth {
  options: OAuthProviderOptions<AppEnv>;
  provider: OAuthProvider<AppEnv>;
  /** By the KV binding they read (the same object for every request of an isolate). */
  helpers: WeakMap<object, OAuthHelpers>;
}

const providers = new Map<string, OriginAuth>();

export function providerFor(origin: string): OAuthProvider<AppEnv> {
  return originAuth(origin).provider;
}

/** The library's helpers for an origin's provider, made once per KV binding. */
export function helpersFor(origin: string, env: AppEnv): OAuthHelpers {
  const auth = originAuth(origin);
  let helpers = auth.helpers.get(env.OAUTH_KV);
  if (!helpers) {
    helpers = getOAuthApi(auth.options, env);
    auth.helpers.set(env.OAUTH_KV, helpers);
  }
  return helpers;
}

function originAuth(origin: string): OriginAuth {
  let auth = providers.get(origin);
  if (!auth) {
    if (providers.size >= MAX_CACHED) providers.clear();
    const options: OAuthProviderOptions<AppEnv> = {
      apiRoute: ['/mcp', '/sse'],
      apiHandler: mcpApi as never,
      defaultHandler: authApp as never,
      authorizeEndpoint: `${origin}/authorize`,
      tokenEndpoint: `${origin}/token`,
      clientRegistrationEndpoint: `${origin}/register`,
      resourceMetadata: { resource: origin, resource_name: 'Proxmox VE MCP server' },
      // Client ID Metadata Documents (what Claude.ai and ChatGPT prefer); dynamic registration
      // stays on as the fallback. Needs the global_fetch_strictly_public compatibility flag, so
      // that fetching a client's document can never reach a private address.
      clientIdMetadataDocumentEnabled: true,
      accessTokenTTL: ACCESS_TOKEN_TTL_S,
      refreshTokenTTL: REFRESH_TOKEN_TTL_S,
      refreshTokenIdleTTL: REFRESH_IDLE_TTL_S,
      tokenExchangeCallback: addGrantId,
      onError: ({ code, description, status, internal }) => {
        console.warn(JSON.stringify({ msg: 'oauth_error', code, status, description, internal }));
      },
    };
    auth = { options, provider: new OAuthProvider<AppEnv>(options), helpers: new WeakMap() };
    providers.set(origin, auth);
  }
  return auth;
}

/** The grant id exists only once the grant does: add it to the props at the code exchange. */
function addGrantId({ grantType, grantId, props }: TokenExchangeCallbackOptions<AppEnv>) {
  if (grantType !== GrantType.AUTHORIZATION_CODE) return undefined;
  return { newProps: { ...(props as Record<string, unknown>), grantId } };
}
