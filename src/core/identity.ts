// Who is calling: the signed-in person behind an MCP session, as carried in the OAuth grant's
// props. Policy scopes (user, grant) and principals, and every log line, use it.

import { SCOPES } from './scopes';

export interface Identity {
  userId: string;
  /** Login or user name at the identity provider (GitHub login, preferred_username). */
  login?: string;
  email?: string;
  name?: string;
  groups: string[];
  clientId: string;
  grantId: string;
  /**
   * The OAuth scopes of the token this request came with (./scopes.ts): the tools it may reach.
   * Props that carry none give none (fail closed): only the token's own scopes are trusted.
   */
  scopes: readonly string[];
}

/** The local, unauthenticated caller (AUTH_MODE=none, loopback only). */
export const ANONYMOUS: Identity = {
  userId: 'anonymous',
  groups: [],
  clientId: 'local',
  grantId: 'local',
  // Loopback only, and nobody to ask: every scope, with the policy deciding each call.
  scopes: SCOPES,
};

/** Reads an identity from agent props; anything malformed counts as no identity at all. */
export function identityFromProps(props: unknown): Identity | null {
  if (!props || typeof props !== 'object') return null;
  const p = props as Record<string, unknown>;
  if (typeof p.userId !== 'string' || !p.userId) return null;
  if (typeof p.clientId !== 'string' || typeof p.grantId !== 'string') return null;
  const groups = Array.isArray(p.groups)
    ? p.groups.filter((g): g is string => typeof g === 'string')
    : [];
  return {
    userId: p.userId,
    ...(typeof p.login === 'string' ? { login: p.login } : {}),
    email: typeof p.email === 'string' ? p.email : undefined,
    name: typeof p.name === 'string' ? p.name : undefined,
    groups,
    clientId: p.clientId,
    grantId: p.grantId,
    scopes: Array.isArray(p.scopes)
      ? p.scopes.filter((s): s is string => typeof s === 'string')
      : [],
  };
}

/**
 * The caller of a request that came with an access token: the person its grant's props name,
 * with the scopes of that token itself (a refresh may have narrowed them below the grant's).
 * The one way every route (MCP, the policy API, /health) reads a token's caller.
 */
export function identityOfToken(props: unknown, tokenScope: readonly string[]): Identity | null {
  const fromProps = identityFromProps(props);
  return fromProps ? { ...fromProps, scopes: [...tokenScope] } : null;
}

/** What matching a person needs: who they are and their groups. */
export interface PersonFacts {
  userId: string;
  email?: string;
  groups: readonly string[];
  /** The token's scopes, for policy rules (`matchesRulePrincipal`) on an MCP call. */
  scopes?: readonly string[];
}

/**
 * The one rule for naming a person, used by admission, administrators, approvers and policy
 * principals alike: a user id matches exactly (ids are opaque and case-sensitive at the IdP); an
 * email matches case-insensitively, and only the verified email the grant carries. Logins and
 * preferred user names never match: people can often choose or rename them.
 */
export function matchesPerson(entry: string, who: PersonFacts): boolean {
  if (entry === who.userId) return true;
  return (
    who.email !== undefined &&
    entry.includes('@') &&
    entry.toLowerCase() === who.email.toLowerCase()
  );
}

/**
 * A principal entry naming people: `group:<name>` (exact group name) or a person as in
 * `matchesPerson`. A `scope:` entry names no one here (administrators, policy editors, approvers
 * are people, whatever token they hold): only policy rules read it (`matchesRulePrincipal`).
 */
export function matchesPrincipal(entry: string, who: PersonFacts): boolean {
  if (entry.startsWith('group:')) return who.groups.includes(entry.slice(6));
  if (entry.startsWith('scope:')) return false;
  return matchesPerson(entry, who);
}

/**
 * A policy rule's principal entry: as `matchesPrincipal`, and `scope:<scope>`, a scope of the
 * calling token (e.g. `scope:pve:operate`).
 */
export function matchesRulePrincipal(entry: string, who: PersonFacts): boolean {
  if (entry.startsWith('scope:')) return who.scopes?.includes(entry.slice(6)) ?? false;
  return matchesPrincipal(entry, who);
}

export function matchesAnyPrincipal(entries: readonly string[], who: PersonFacts): boolean {
  return entries.some((entry) => matchesPrincipal(entry, who));
}
