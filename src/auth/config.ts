// Sign-in as the checked configuration says (../config/sign-in.ts): the upstream identity
// provider built for this origin, who is still admitted, and the public origin. No environment
// reads here; every problem is reported, never guessed around.

import { type Clock, systemClock } from '../clock';
import type { Config } from '../config';
import { kept } from '../core/kept';
import { Refusal } from '../http/refusal';
import { logLine } from '../log';
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

type Built = AuthConfig | { error: string };

/** Each configuration's sign-in, per clock (and per origin for the dev sign-in): built once. */
const built = new WeakMap<Config, WeakMap<Clock, Map<string, Built>>>();

/**
 * The sign-in for this origin (the dev sign-in's pages live on it), built and checked once per
 * configuration. `clock`: the Runtime's (the OpenID Connect discovery cache's time).
 */
export function authConfig(config: Config, origin: string, clock: Clock = systemClock): Built {
  const byClock = kept(built, config, () => new WeakMap<Clock, Map<string, Built>>());
  const byOrigin = kept(byClock, clock, () => new Map<string, Built>());
  // Only the dev sign-in depends on the origin: one provider for any other, whatever the Host.
  const key = config.signIn.idpKind === 'dev' ? origin : '';
  return kept(byOrigin, key, () => buildSignIn(config, origin, clock));
}

/**
 * The sign-in for a request; without one, the page that says it cannot sign anyone in is thrown
 * (a Refusal): the details go to the operator (the log, /health on loopback), not to whoever
 * visits.
 */
export function signInFor(config: Config, request: Request, clock: Clock): AuthConfig {
  const signIn = authConfig(config, publicOrigin(config, request), clock);
  if (!('error' in signIn)) return signIn;
  logLine('error', 'auth_misconfigured', { error: signIn.error });
  throw Refusal.page(
    503,
    'Sign-in is not configured',
    'This server cannot sign anyone in until its administrator finishes the set-up.',
  );
}

function buildSignIn(config: Config, origin: string, clock: Clock): Built {
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
  // A PUBLIC_URL that is not a URL is reported by /health.
  return configured instanceof URL ? configured.origin : new URL(request.url).origin;
}
