// Who is calling: the signed-in person behind an MCP session, as carried in the OAuth grant's
// props. Policy scopes (user, grant) and principals, and every log line, use it.

export interface Identity {
  userId: string;
  /** Login or user name at the identity provider (GitHub login, preferred_username). */
  login?: string;
  email?: string;
  name?: string;
  groups: string[];
  clientId: string;
  grantId: string;
}

/** The local, unauthenticated caller (AUTH_MODE=none, loopback only). */
export const ANONYMOUS: Identity = {
  userId: 'anonymous',
  groups: [],
  clientId: 'local',
  grantId: 'local',
};

/** Reads an identity from agent props; anything malformed counts as no identity at all. */
export function identityFromProps(props: unknown): Identity | null {
  if (!props || typeof props !== 'object') return null;
  const p = props as Record<string, unknown>;
  if (typeof p.userId !== 'string' || !p.userId) return null;
  if (typeof p.clientId !== 'string' || typeof p.grantId !== 'string') return null;
  const groups = Array.isArray(p.groups) ? p.groups.filter((g): g is string => typeof g === 'string') : [];
  return {
    userId: p.userId,
    ...(typeof p.login === 'string' ? { login: p.login } : {}),
    email: typeof p.email === 'string' ? p.email : undefined,
    name: typeof p.name === 'string' ? p.name : undefined,
    groups,
    clientId: p.clientId,
    grantId: p.grantId,
  };
}
