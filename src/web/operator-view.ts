// Who may read /health's details (and /admin/metrics.json). Anyone gets booleans and counts; details (problem texts, the
// policy's errors, how Proxmox failed, versions) would give an attacker a map of the deployment,
// so they go only to an administrator (ADMIN_USERS / ADMIN_GROUPS) who is still admitted and who
// comes either with a web session (signed in on /admin) or with a bearer token that this server
// issued, for this server, carrying a policy scope (`policy:read` or `policy:edit`): the token
// `npm run doctor -- <url> --token ...` is given. An MCP client's token is never enough, even an
// administrator's: a tool scope is what an AI client holds, and the map is not for it. Where a
// request comes from does not count: a Host header is the caller's to write, and behind a tunnel
// or a proxy on the same machine every connection comes from loopback. With AUTH_MODE=none every
// caller may already run every tool (loopback only, ../net/loopback-guard.ts): the details tell them nothing
// more.

import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import { bearerIdentity, bearerToken } from '../auth/bearer';
import { stillAdmitted } from '../auth/config';
import { readSession } from '../auth/web-session';
import type { Config } from '../config';
import { POLICY_SCOPES } from '../core/scopes';
import { isAdmin } from './admins';

export type HealthView = 'operator' | 'public';

/** `oauth`: the OAuth library's helpers, present on the routes it hands on (none with AUTH_MODE=none). */
export async function healthView(
  config: Config,
  oauth: OAuthHelpers | undefined,
  kv: KVNamespace,
  request: Request,
): Promise<HealthView> {
  if (config.authMode === 'none') return 'operator';
  if (bearerToken(request)) {
    // A token decides alone: a cookie sent beside a tool token does not lift it.
    const caller = await bearerIdentity(config, oauth, request);
    const policyScoped = caller?.scope.some((scope) => POLICY_SCOPES.includes(scope)) ?? false;
    return caller && policyScoped && isAdmin(config, caller.identity) ? 'operator' : 'public';
  }
  const session = await readSession(kv, request).catch(() => null);
  return session && stillAdmitted(config, session.identity) && isAdmin(config, session.identity)
    ? 'operator'
    : 'public';
}
