// Who is an administrator: ADMIN_USERS (user ids or verified emails) and ADMIN_GROUPS. With neither set,
// nobody is, except where there is only one local person anyway (AUTH_MODE=none, or IDP=dev).

import type { Config } from '../config';
import { matchesPerson, type Identity } from '../identity';

export function isAdmin(config: Config, identity: Identity): boolean {
  const { users, groups } = config.admins;
  if (users.length === 0 && groups.length === 0) {
    return config.authMode === 'none' || config.signIn.idpKind === 'dev';
  }
  return (
    users.some((u) => matchesPerson(u, identity)) || identity.groups.some((g) => groups.includes(g))
  );
}
