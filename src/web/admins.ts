// Who is an administrator: ADMIN_USERS (user ids or verified emails) and ADMIN_GROUPS. With neither set,
// nobody is, except where there is only one local person anyway (AUTH_MODE=none, or IDP=dev).

import type { AppEnv } from '../env';
import { matchesPerson, type Identity } from '../identity';

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(/[,\s]+/)
    .map((v) => v.trim())
    .filter(Boolean);

export function isAdmin(env: AppEnv, identity: Identity): boolean {
  const users = list(env.ADMIN_USERS);
  const groups = list(env.ADMIN_GROUPS);
  if (users.length === 0 && groups.length === 0) {
    return (env.AUTH_MODE ?? '').trim() === 'none' || (env.IDP ?? '').trim() === 'dev';
  }
  return users.some((u) => matchesPerson(u, identity)) || identity.groups.some((g) => groups.includes(g));
}
