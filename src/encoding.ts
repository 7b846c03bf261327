// base64url (RFC 4648 §5, no padding): what tokens, ids, nonces and cursors are written in, so
// that they travel in URLs, cookies and headers unchanged; random tokens in it; SHA-256 in hex.

/** base64url of the bytes, or of the UTF-8 text. */
export function base64Url(data: Uint8Array | string): string {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The text a base64url string holds (UTF-8); throws when it is not base64url. */
export function fromBase64Url(text: string): string {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/** `bytes` random bytes (crypto.getRandomValues), in base64url. */
export function randomToken(bytes: number): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** Lower-case hex SHA-256 of the UTF-8 text (WebCrypto). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
