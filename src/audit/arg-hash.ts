// The argument hash that audit records and approvals carry: HMAC-SHA256 of the canonical JSON
// arguments under a key only this server holds (kept by ../keys/server-keys.ts). Identical
// calls still match, but a short secret argument (a password, a PIN) cannot be found by hashing
// guesses, as it could from a plain SHA-256.

export type ArgsHmacer = (canonical: string) => Promise<string>;

/**
 * An HMAC of canonical arguments whose key is loaded on first use through `loadKey` (base64 of
 * 32 bytes) and kept by this hmacer: the Runtime holds one, so an isolate loads the key once. A
 * failed load is not kept: the next call tries again, and this one fails (its caller fails
 * closed).
 */
export function argsHmacer(loadKey: () => Promise<string>): ArgsHmacer {
  let cachedKey: Promise<CryptoKey> | undefined;
  return async (canonical) => {
    cachedKey ??= loadKey().then(importKey);
    let key: CryptoKey;
    try {
      key = await cachedKey;
    } catch (err) {
      cachedKey = undefined;
      throw err;
    }
    return hmacHex(key, canonical);
  };
}

export async function importKey(base64: string): Promise<CryptoKey> {
  const raw = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  if (raw.length < 32) throw new Error('the argument-hash key is shorter than 32 bytes');
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

export async function hmacHex(key: CryptoKey, text: string): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(text));
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, '0')).join('');
}
