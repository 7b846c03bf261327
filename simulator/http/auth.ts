// API-token authentication as pveproxy does it (pve-http-server extract_auth_value, pve-manager
// auth_handler, pve-access-control verify_token). Pure: headers in, tagged result out.
import type { IncomingHttpHeaders } from 'node:http';
import { findToken, type Identity } from '../access/tokens.ts';

export type AuthResult =
  | { readonly ok: true; readonly identity: Identity }
  /** 'No ticket' when no credentials were sent; 'Authentication failed!' for bad ones. */
  | {
      readonly ok: false;
      readonly reason: 'No ticket' | 'Authentication failed!';
      readonly detail: string;
    };

const TOKEN_ID_RE = /^(?:[^\s:/]+)@(?:[A-Za-z][A-Za-z0-9.\-_]+)!(?:[A-Za-z][A-Za-z0-9.\-_]+)$/;

/** `(?:^|\s)KEY(?:=| )([^;]*)`, then uri_unescape: how pveproxy pulls a value from a header. */
function extractAuthValue(header: string | undefined, key: string): string | undefined {
  if (!header) return undefined;
  const match = new RegExp(`(?:^|\\s)${key}(?:=| )([^;]*)`).exec(header);
  if (!match?.[1]) return undefined;
  return decodeURIComponentLenient(match[1]);
}

function decodeURIComponentLenient(text: string): string {
  const bytes = text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function failed(detail: string): AuthResult {
  return { ok: false, reason: 'Authentication failed!', detail };
}

export function authenticate(headers: IncomingHttpHeaders): AuthResult {
  const authorization = headers.authorization;
  const ticket =
    extractAuthValue(headers.cookie, 'PVEAuthCookie') ??
    extractAuthValue(authorization, 'PVEAuthCookie');
  // The simulator issues no tickets, so any ticket sent is an invalid one.
  if (ticket) return failed('invalid ticket');
  const token = extractAuthValue(authorization, 'PVEAPIToken');
  if (!token) return { ok: false, reason: 'No ticket', detail: 'no credentials' };
  // verify_token: /^(.*)=(.*)$/ is greedy, so the split is at the LAST '='.
  const split = token.lastIndexOf('=');
  if (split < 0) return failed('no tokenid specified');
  const tokenId = token.slice(0, split);
  const secret = token.slice(split + 1);
  if (!TOKEN_ID_RE.test(tokenId)) return failed(`'${tokenId}' is not a valid token ID`);
  const known = findToken(tokenId);
  if (!known) return failed(`no such token '${tokenId}'`);
  if (known.secret !== secret) return failed('invalid token value!');
  return { ok: true, identity: known };
}

/** For the request log: keep the token id, hide the secret. */
export function redactAuthorization(value: string): string {
  const match = /^(\s*PVEAPIToken[= ])(.*)$/.exec(value);
  if (!match) return '<redacted>';
  const token = match[2] ?? '';
  const split = token.lastIndexOf('=');
  return split < 0 ? `${match[1]}<redacted>` : `${match[1]}${token.slice(0, split)}=<redacted>`;
}
