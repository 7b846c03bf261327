// Access tokens the OAuth library has accepted in this isolate, remembered so that a 2026-07-28
// call can begin its work while its token is being confirmed, instead of after.
//
// A remembered token is never trusted on its own. Every call confirms it again through the
// library (its public unwrapToken: the same KV record the library reads for every request, so a
// revoked or expired token fails exactly as it would without this), and until that answer is
// back nothing reaches Proxmox or a store that acts for the caller, and no byte of the answer
// leaves (CallHost.admitted, and the entry's wait before it replies). What the overlap saves is
// the time the token's KV read would otherwise stand in front of the call's own work.

/** Enough for every person's client of a busy team; the oldest are forgotten first. */
const MAX_REMEMBERED = 1_000;

export interface RememberedToken {
  /** The grant's props, as the library decrypted them when it accepted the token. */
  props: Record<string, unknown>;
  grantId: string;
  /** Seconds since the epoch, as the library keeps it. */
  expiresAt: number;
}

const remembered = new Map<string, RememberedToken>();

/** The key a token is remembered under: a SHA-256 of the public origin and the token, never the token. */
export async function rememberedKey(origin: string, token: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${origin}\n${token}`));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export function rememberToken(key: string, token: RememberedToken): void {
  if (remembered.size >= MAX_REMEMBERED && !remembered.has(key)) {
    const oldest = remembered.keys().next();
    if (!oldest.done) remembered.delete(oldest.value);
  }
  remembered.set(key, token);
}

/** The token remembered under `key`, unless it has expired (then it is forgotten). */
export function recallToken(key: string, nowS = Math.floor(Date.now() / 1000)): RememberedToken | undefined {
  const found = remembered.get(key);
  if (found && found.expiresAt < nowS) {
    remembered.delete(key);
    return undefined;
  }
  return found;
}

export function forgetToken(key: string): void {
  remembered.delete(key);
}
