// Who may read /health's details. Anyone gets booleans and counts; details (problem texts, the
// policy's errors, how Proxmox failed, versions) would give an attacker a map of the deployment,
// so they go only to a request on loopback (the operator's own machine) or to one carrying a
// bearer token that this server issued, for this server, to a person who is an administrator
// (ADMIN_USERS / ADMIN_GROUPS) and still admitted. `npm run doctor -- <url> --token ...` uses this.

import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import { bearerIdentity } from '../auth/bearer';
import type { Config } from '../config';
import { isLoopbackHostname } from '../guard';
import { isAdmin } from '../web/admins';

export type HealthView = 'operator' | 'public';

/** `oauth`: the OAuth library's helpers, present on the routes it hands on (none with AUTH_MODE=none). */
export async function healthView(
  config: Config,
  oauth: OAuthHelpers | undefined,
  request: Request,
): Promise<HealthView> {
  if (isLoopbackHostname(new URL(request.url).hostname)) return 'operator';
  const caller = await bearerIdentity(config, oauth, request);
  return caller && isAdmin(config, caller.identity) ? 'operator' : 'public';
}
