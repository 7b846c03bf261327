// Who may get a grant at all: ALLOWED_USERS (user ids or verified emails, matched by the one
// person rule in ../core/identity.ts; `*` for anyone who can sign in) and ALLOWED_GROUPS. Fails closed: with both empty nobody is admitted, except with
// the local dev IdP. Pure.

import { matchesPerson } from '../core/identity';
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
      : {
          admitted: false,
          reason:
            'No one is admitted yet: the administrator has not set ALLOWED_USERS or ALLOWED_GROUPS.',
        };
  }
  const userOk = allowedUsers.some((u) => u === '*' || matchesPerson(u, identity));
  const groupOk = allowedGroups.some((g) => identity.groups.includes(g));
  if (userOk || groupOk) return { admitted: true };
  return {
    admitted: false,
    reason: "Your account is not on this server's list of allowed users or groups.",
  };
}
