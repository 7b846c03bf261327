// Browser sessions for the admin and approval pages, separate from MCP tokens: a random token in
// a __Host- cookie (Secure, HttpOnly, SameSite=Lax), its SHA-256 as the KV key, the signed-in
// identity and a CSRF token as the value. Eight hours, then sign in again.

import { randomToken, sha256Hex } from '../encoding';
import type { Identity } from '../core/identity';

export const SESSION_COOKIE = '__Host-pve-mcp-session';
const SESSION_TTL_S = 8 * 3600;

export interface WebSession {
  identity: Identity;
  /** Sent back by every form of the session; a POST without it is refused. */
  csrf: string;
}

export async function createSession(
  kv: KVNamespace,
  identity: Identity,
): Promise<{ cookie: string; session: WebSession }> {
  const token = randomToken(32);
  const session: WebSession = { identity, csrf: randomToken(32) };
  await kv.put(await key(token), JSON.stringify(session), {
    expirationTtl: SESSION_TTL_S,
  });
  const cookie = `${SESSION_COOKIE}=${token}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_S}`;
  return { cookie, session };
}

export async function readSession(kv: KVNamespace, request: Request): Promise<WebSession | null> {
  const token = readCookie(request, SESSION_COOKIE);
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const stored = await kv.get(await key(token));
  if (!stored) return null;
  try {
    return JSON.parse(stored) as WebSession;
  } catch {
    return null;
  }
}

export async function endSession(kv: KVNamespace, request: Request): Promise<string> {
  const token = readCookie(request, SESSION_COOKIE);
  if (token) await kv.delete(await key(token));
  return `${SESSION_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0`;
}

export function readCookie(request: Request, name: string): string | null {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return null;
}

async function key(token: string): Promise<string> {
  return `websession:${await sha256Hex(token)}`;
}
