// Who may get a grant at all: ALLOWED_USERS (user ids or verified emails; `*` for anyone who
// can sign in) and ALLOWED_GROUPS. Fails closed: with both empty nobody is admitted, except with
// the local dev IdP. Pure.

import type { UpstreamIdentity } from './idp';

export type Admission = { admitted: true } | { admitted: false; reason: string };

export function admit(
  identity: UpstreamIdentity,
  allowedUsers: readonly string[],
  allowedGroups: readonly string[],
  devMode: boolean,
): Admission {
  if (allowedUsers.length === 0 && allowedGroups.length === 0) {
    return devMode
      ? { admitted: true }
      : { admitted: false, reason: 'No one is admitted yet: the administrator has not set ALLOWED_USERS or ALLOWED_GROUPS.' };
  }
  // Logins and preferred user names can be chosen or renamed: only ids and verified emails match.
  const names = [identity.userId, identity.email]
    .filter((n): n is string => typeof n === 'string' && n !== '')
    .map((n) => n.toLowerCase());
  const userOk = allowedUsers.some((u) => u === '*' || names.includes(u.toLowerCase()));
  const groupOk = allowedGroups.some((g) => identity.groups.includes(g));
  if (userOk || groupOk) return { admitted: true };
  return { admitted: false, reason: 'Your account is not on this server\'s list of allowed users or groups.' };
}
