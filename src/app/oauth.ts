// The OAuth 2.1 authorization server and resource guard, from @cloudflare/workers-oauth-provider:
// RFC 9728/8414 metadata, client ID metadata documents and dynamic registration, PKCE, tokens
// bound to this server's resource, refresh tokens, `iss` in authorization responses. One
// provider per public origin (PUBLIC_URL, or the request's own).

import { logLine } from '../log';
import {
  OAuthProvider,
  GrantType,
  type TokenExchangeCallbackOptions,
} from '@cloudflare/workers-oauth-provider';
import type { AppEnv } from '../env';
import { POLICY_SCOPES, SCOPES } from '../core/scopes';
import { mcpApi } from '../mcp/route';
import { installOutboundGuard } from './outbound-guard';

/** Where the provider sends every request that is neither its own endpoint nor the API. */
export interface PagesHandler {
  fetch(request: Request, env: AppEnv, ctx: ExecutionContext): Response | Promise<Response>;
}

// Before any provider exists: the library's own fetches (client metadata documents, jwks_uri)
// reach public https hosts only, and follow no redirects, in every environment.
installOutboundGuard();

const ACCESS_TOKEN_TTL_S = 60 * 60;
const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * 60;
const REFRESH_IDLE_TTL_S = 7 * 24 * 60 * 60;
const MAX_CACHED = 16;

const providers = new Map<string, OAuthProvider<AppEnv>>();

export function providerFor(origin: string, pages: PagesHandler): OAuthProvider<AppEnv> {
  let provider = providers.get(origin);
  if (!provider) {
    if (providers.size >= MAX_CACHED) providers.clear();
    provider = new OAuthProvider<AppEnv>({
      apiRoute: ['/mcp', '/sse'],
      apiHandler: mcpApi as never,
      defaultHandler: pages as never,
      authorizeEndpoint: `${origin}/authorize`,
      tokenEndpoint: `${origin}/token`,
      clientRegistrationEndpoint: `${origin}/register`,
      resourceMetadata: { resource: origin, resource_name: 'Proxmox VE MCP server' },
      // The scopes a person may grant a client (../core/scopes.ts): published in both metadata
      // documents and named in the 401 challenge, so a client asks for them; the consent page
      // then ticks only those that are safe by default, and the person chooses.
      requiredScopes: [...SCOPES],
      scopesSupported: [...SCOPES, ...POLICY_SCOPES],
      // Client ID Metadata Documents (what Claude.ai and ChatGPT prefer); dynamic registration
      // stays on as the fallback. The library insists on the global_fetch_strictly_public
      // compatibility flag (it keeps fetches off private addresses on Cloudflare's edge, even
      // for a public name that resolves to one); the outbound guard above holds everywhere.
      clientIdMetadataDocumentEnabled: true,
      accessTokenTTL: ACCESS_TOKEN_TTL_S,
      refreshTokenTTL: REFRESH_TOKEN_TTL_S,
      refreshTokenIdleTTL: REFRESH_IDLE_TTL_S,
      tokenExchangeCallback: addGrantId,
      onError: ({ code, description, status, internal }) => {
        logLine('warn', 'oauth_error', { code, status, description, internal });
      },
    });
    providers.set(origin, provider);
  }
  return provider;
}

/** The grant id exists only once the grant does: add it to the props at the code exchange. */
function addGrantId({ grantType, grantId, props }: TokenExchangeCallbackOptions<AppEnv>) {
  if (grantType !== GrantType.AUTHORIZATION_CODE) return undefined;
  return { newProps: { ...(props as Record<string, unknown>), grantId } };
}
