// Sign-in configuration: which upstream identity provider (IDP), who is admitted
// (ALLOWED_USERS / ALLOWED_GROUPS), and the public origin (PUBLIC_URL). Read from the Worker's
// variables; every problem is reported, never guessed around.

import { listSetting } from '../config';
import type { AppEnv } from '../env';
import { admit } from './admission';
import { devIdp } from './idp-dev';
import { githubConfigProblem, githubIdp, type GithubConfig } from './idp-github';
import { oidcConfigProblem, oidcIdp, type OidcConfig } from './idp-oidc';
import type { UpstreamIdp } from './idp';

export type IdpKind = 'dev' | 'oidc' | 'github';

export interface AuthConfig {
  idp: UpstreamIdp;
  allowedUsers: string[];
  allowedGroups: string[];
}

export function idpKind(env: AppEnv): IdpKind | { error: string } {
  const kind = (env.IDP ?? '').trim();
  if (kind === 'dev' || kind === 'oidc' || kind === 'github') return kind;
  return {
    error: kind
      ? `IDP must be dev, oidc or github, got ${JSON.stringify(kind.slice(0, 20))}`
      : 'IDP is not set (dev, oidc or github)',
  };
}

export function authConfig(env: AppEnv, origin: string): AuthConfig | { error: string } {
  const kind = idpKind(env);
  if (typeof kind !== 'string') return kind;
  const allowedUsers = listSetting(env.ALLOWED_USERS);
  const allowedGroups = listSetting(env.ALLOWED_GROUPS);
  const problems: string[] = [];
  const need = (name: keyof AppEnv): string => {
    const value = (env[name] as string | undefined)?.trim() ?? '';
    if (!value) problems.push(`${name} is not set`);
    return value;
  };
  let idp: UpstreamIdp | undefined;
  switch (kind) {
    case 'dev':
      idp = devIdp(origin);
      break;
    case 'oidc': {
      const issuer = need('OIDC_ISSUER');
      const clientId = need('OIDC_CLIENT_ID');
      const clientSecret = need('OIDC_CLIENT_SECRET');
      if (!problems.length) {
        const config: OidcConfig = {
          issuer,
          clientId,
          clientSecret,
          scopes: listSetting(env.OIDC_SCOPES).length
            ? listSetting(env.OIDC_SCOPES)
            : ['openid', 'email', 'profile'],
          groupsClaim: env.OIDC_GROUPS_CLAIM?.trim() || 'groups',
          trustEmail: env.OIDC_TRUST_EMAIL?.trim().toLowerCase() === 'true',
        };
        const problem = oidcConfigProblem(config);
        if (problem) problems.push(problem);
        else idp = oidcIdp(config);
      }
      break;
    }
    case 'github': {
      const clientId = need('GITHUB_CLIENT_ID');
      const clientSecret = need('GITHUB_CLIENT_SECRET');
      if (!problems.length) {
        const config: GithubConfig = {
          clientId,
          clientSecret,
          org: env.GITHUB_ORG?.trim() || undefined,
          webUrl: env.GITHUB_URL?.trim() || 'https://github.com',
          apiUrl: env.GITHUB_API_URL?.trim() || 'https://api.github.com',
        };
        const problem = githubConfigProblem(config);
        if (problem) problems.push(problem);
        else idp = githubIdp(config);
      }
      break;
    }
  }
  if (problems.length || !idp) return { error: problems.join('; ') };
  return { idp, allowedUsers, allowedGroups };
}

/**
 * Whether someone signed in earlier is still admitted by the current ALLOWED_USERS and
 * ALLOWED_GROUPS, checked on every request: removing a person takes effect at once, not when
 * their grant expires. (Groups are those from their last sign-in.)
 */
export function stillAdmitted(
  env: AppEnv,
  identity: { userId: string; email?: string; groups: string[] },
): boolean {
  if ((env.AUTH_MODE ?? '').trim() === 'none') return true;
  return admit(
    identity,
    listSetting(env.ALLOWED_USERS),
    listSetting(env.ALLOWED_GROUPS),
    (env.IDP ?? '').trim() === 'dev',
  ).admitted;
}

/** The public origin: PUBLIC_URL when set, else the request's own. */
export function publicOrigin(env: AppEnv, request: Request): string {
  const configured = env.PUBLIC_URL?.trim();
  if (configured) {
    try {
      return new URL(configured).origin;
    } catch {
      // fall through: a malformed PUBLIC_URL is reported by /health
    }
  }
  return new URL(request.url).origin;
}
