// Sign-in settings, parsed once from the environment: which identity provider (IDP) with its
// settings, who is admitted (ALLOWED_USERS, ALLOWED_GROUPS) and the public origin (PUBLIC_URL).
// Each missing setting is named; building the provider itself (which needs the request's origin
// for the dev sign-in) is ../auth/config.ts's job.

import type { AppEnv } from '../env';
import { listSetting } from './lists';

export type IdpKind = 'dev' | 'oidc' | 'github';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Default ['openid', 'email', 'profile']. */
  scopes: string[];
  /** Default 'groups'; a dotted path such as 'realm_access.roles' reaches into nested claims. */
  groupsClaim: string;
  /** Accept an email the provider does not mark verified nor unverified (e.g. Entra ID). */
  trustEmail?: boolean;
}

export interface GithubSettings {
  clientId: string;
  clientSecret: string;
  /** When set, active membership of this org and its team slugs become groups. */
  org?: string;
  /** Default https://github.com */
  webUrl: string;
  /** Default https://api.github.com */
  apiUrl: string;
}

export type IdpSettings =
  | { kind: 'dev' }
  | { kind: 'oidc'; oidc: OidcSettings }
  | { kind: 'github'; github: GithubSettings };

export interface SignInSettings {
  /** The identity provider, or what is missing. */
  idp: IdpSettings | { error: string };
  /** What IDP says, even when the provider's settings are incomplete (the dev sign-in's loopback rule needs it). */
  idpKind: IdpKind | null;
  allowedUsers: string[];
  allowedGroups: string[];
  /**
   * PUBLIC_URL, parsed: its URL, `invalid` when it is not one (the request's own origin is used
   * then, and /health says so), or null when it is not set.
   */
  publicUrl: URL | 'invalid' | null;
}

export function signInSettings(env: AppEnv): SignInSettings {
  const kind = (env.IDP ?? '').trim();
  const idpKind = kind === 'dev' || kind === 'oidc' || kind === 'github' ? kind : null;
  return {
    idp: idpKind
      ? idpSettings(env, idpKind)
      : {
          error: kind
            ? `IDP must be dev, oidc or github, got ${JSON.stringify(kind.slice(0, 20))}`
            : 'IDP is not set (dev, oidc or github)',
        },
    idpKind,
    allowedUsers: listSetting(env.ALLOWED_USERS),
    allowedGroups: listSetting(env.ALLOWED_GROUPS),
    publicUrl: publicUrlOf(env.PUBLIC_URL),
  };
}

function idpSettings(env: AppEnv, kind: IdpKind): IdpSettings | { error: string } {
  const problems: string[] = [];
  const need = (name: keyof AppEnv): string => {
    const value = (env[name] as string | undefined)?.trim() ?? '';
    if (!value) problems.push(`${name} is not set`);
    return value;
  };
  switch (kind) {
    case 'dev':
      return { kind };
    case 'oidc': {
      const oidc: OidcSettings = {
        issuer: need('OIDC_ISSUER'),
        clientId: need('OIDC_CLIENT_ID'),
        clientSecret: need('OIDC_CLIENT_SECRET'),
        scopes: listSetting(env.OIDC_SCOPES).length
          ? listSetting(env.OIDC_SCOPES)
          : ['openid', 'email', 'profile'],
        groupsClaim: env.OIDC_GROUPS_CLAIM?.trim() || 'groups',
        trustEmail: env.OIDC_TRUST_EMAIL?.trim().toLowerCase() === 'true',
      };
      return problems.length ? { error: problems.join('; ') } : { kind, oidc };
    }
    case 'github': {
      const github: GithubSettings = {
        clientId: need('GITHUB_CLIENT_ID'),
        clientSecret: need('GITHUB_CLIENT_SECRET'),
        org: env.GITHUB_ORG?.trim() || undefined,
        webUrl: env.GITHUB_URL?.trim() || 'https://github.com',
        apiUrl: env.GITHUB_API_URL?.trim() || 'https://api.github.com',
      };
      return problems.length ? { error: problems.join('; ') } : { kind, github };
    }
  }
}

function publicUrlOf(raw: string | undefined): URL | 'invalid' | null {
  const text = raw?.trim();
  if (!text) return null;
  try {
    return new URL(text);
  } catch {
    return 'invalid';
  }
}
