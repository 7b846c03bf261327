// Who is an administrator: ADMIN_USERS (user ids or verified emails) and ADMIN_GROUPS. With neither set,
// nobody is, except where there is only one local person anyway (AUTH_MODE=none, or IDP=dev).

import type { Config } from '../config';
import { matchesAnyPrincipal, matchesPerson, type Identity } from '../core/identity';

export function isAdmin(config: Config, identity: Identity): boolean {
  const { users, groups } = config.admins;
  if (users.length === 0 && groups.length === 0) {
    return config.authMode === 'none' || config.signIn.idpKind === 'dev';
  }
  return (
    users.some((u) => matchesPerson(u, identity)) || identity.groups.some((g) => groups.includes(g))
  );
}

/**
 * Who may change the policy: POLICY_EDITORS (users, emails, `group:<name>`). With none set,
 * nobody may, except where there is only one local person anyway (AUTH_MODE=none, or IDP=dev
 * with no administrators named either). An administrator who is not an editor sees and changes
 * nothing of it but what any administrator sees.
 */
export function isEditor(config: Config, identity: Identity): boolean {
  if (config.editors.length === 0) {
    const { users, groups } = config.admins;
    const local = config.authMode === 'none' || config.signIn.idpKind === 'dev';
    return local && users.length === 0 && groups.length === 0;
  }
  return matchesAnyPrincipal(config.editors, identity);
}
