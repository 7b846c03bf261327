// Who may read /health's details. Anyone gets booleans and counts; details (problem texts, the
// policy's errors, how Proxmox failed, versions) would give an attacker a map of the deployment,
// so they go only to a request on loopback (the operator's own machine) or to one carrying a
// bearer token that this server issued, for this server, to a person who is an administrator
// (ADMIN_USERS / ADMIN_GROUPS) and still admitted. `npm run doctor -- <url> --token ...` uses this.

import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import { publicOrigin, stillAdmitted } from '../auth/config';
import type { Config } from '../config';
import { isLoopbackHostname } from '../guard';
import { identityFromProps } from '../identity';
import { isAdmin } from '../web/admins';

export type HealthView = 'operator' | 'public';

/** `oauth`: the OAuth library's helpers, present on the routes it hands on (none with AUTH_MODE=none). */
export async function healthView(
  config: Config,
  oauth: OAuthHelpers | undefined,
  request: Request,
): Promise<HealthView> {
  if (isLoopbackHostname(new URL(request.url).hostname)) return 'operator';
  const token = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
  if (!token || !oauth) return 'public';
  try {
    const summary = await oauth.unwrapToken(token);
    if (!summary || !audienceMatches(summary.audience, publicOrigin(config, request)))
      return 'public';
    const identity = identityFromProps(summary.grant.props);
    return identity && stillAdmitted(config, identity) && isAdmin(config, identity)
      ? 'operator'
      : 'public';
  } catch {
    // A malformed token or a storage error: no details, and no error that would tell tokens apart.
    return 'public';
  }
}

function audienceMatches(audience: string | string[] | undefined, resource: string): boolean {
  const list = audience === undefined ? [] : Array.isArray(audience) ? audience : [audience];
  const strip = (u: string): string => u.replace(/\/+$/, '');
  return list.some((a) => strip(a) === strip(resource));
}
