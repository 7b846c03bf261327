// Who is an administrator: ADMIN_USERS (user ids or verified emails) and ADMIN_GROUPS. With neither set,
// nobody is, except where there is only one local person anyway (AUTH_MODE=none, or IDP=dev).

import type { AppEnv } from '../env';
import type { Identity } from '../identity';

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(/[,\s]+/)
    .map((v) => v.trim())
    .filter(Boolean);

export function isAdmin(env: AppEnv, identity: Identity): boolean {
  const users = list(env.ADMIN_USERS).map((u) => u.toLowerCase());
  const groups = list(env.ADMIN_GROUPS);
  if (users.length === 0 && groups.length === 0) {
    return (env.AUTH_MODE ?? '').trim() === 'none' || (env.IDP ?? '').trim() === 'dev';
  }
  const names = [identity.userId, identity.email].filter((n): n is string => !!n).map((n) => n.toLowerCase());
  return names.some((n) => users.includes(n)) || identity.groups.some((g) => groups.includes(g));
}
