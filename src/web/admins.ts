// Who is an administrator: ADMIN_USERS (user ids or verified emails) and ADMIN_GROUPS. With neither set,
// nobody is, except where there is only one local person anyway (AUTH_MODE=none, or IDP=dev).

import { configOf } from '../config';
import type { AppEnv } from '../env';
import { matchesPerson, type Identity } from '../identity';

export function isAdmin(env: AppEnv, identity: Identity): boolean {
  const config = configOf(env);
  const { users, groups } = config.admins;
  if (users.length === 0 && groups.length === 0) {
    return config.authMode === 'none' || (env.IDP ?? '').trim() === 'dev';
  }
  return (
    users.some((u) => matchesPerson(u, identity)) || identity.groups.some((g) => groups.includes(g))
  );
}
