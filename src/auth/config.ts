// Sign-in as the checked configuration says (../config/sign-in.ts): the upstream identity
// provider built for this origin, who is still admitted, and the public origin. No environment
// reads here; every problem is reported, never guessed around.

import { type Clock, systemClock } from '../clock';
import type { Config } from '../config';
import { admit } from './admission';
import type { UpstreamIdp } from './idp';
import { devIdp } from './idp-dev';
import { githubConfigProblem, githubIdp } from './idp-github';
import { oidcConfigProblem, oidcIdp } from './idp-oidc';

export interface AuthConfig {
  idp: UpstreamIdp;
  allowedUsers: string[];
  allowedGroups: string[];
}

/** `clock`: the Runtime's (the OpenID Connect discovery cache's time). */
export function authConfig(
  config: Config,
  origin: string,
  clock: Clock = systemClock,
): AuthConfig | { error: string } {
  const { idp: settings, allowedUsers, allowedGroups } = config.signIn;
  if ('error' in settings) return settings;
  let idp: UpstreamIdp;
  switch (settings.kind) {
    case 'dev':
      idp = devIdp(origin);
      break;
    case 'oidc': {
      const problem = oidcConfigProblem(settings.oidc);
      if (problem) return { error: problem };
      idp = oidcIdp(settings.oidc, clock);
      break;
    }
    case 'github': {
      const problem = githubConfigProblem(settings.github);
      if (problem) return { error: problem };
      idp = githubIdp(settings.github);
      break;
    }
  }
  return { idp, allowedUsers, allowedGroups };
}

/**
 * Whether someone signed in earlier is still admitted by the current ALLOWED_USERS and
 * ALLOWED_GROUPS, checked on every request: removing a person takes effect at once, not when
 * their grant expires. (Groups are those from their last sign-in.)
 */
export function stillAdmitted(
  config: Config,
  identity: { userId: string; email?: string; groups: string[] },
): boolean {
  if (config.authMode === 'none') return true;
  const { allowedUsers, allowedGroups, idpKind } = config.signIn;
  return admit(identity, allowedUsers, allowedGroups, idpKind === 'dev').admitted;
}

/** The public origin: PUBLIC_URL when set, else the request's own. */
export function publicOrigin(config: Config, request: Request): string {
  const configured = config.signIn.publicUrl;
  if (configured) {
    try {
      return new URL(configured).origin;
    } catch {
      // fall through: a malformed PUBLIC_URL is reported by /health
    }
  }
  return new URL(request.url).origin;
}
