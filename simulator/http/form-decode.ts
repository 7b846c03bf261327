// Request decoding exactly like pve-http-server AnyEvent.pm decode_urlencoded: pairs are split
// on BOTH '&' and ';', each pair on '=' with any further '=' parts dropped, then '+' → space and
// %XX decoding. So an unencoded `tags=a;b` arrives as `tags=a` plus an unknown parameter `b`.
import type { ParamValue } from '../schema/schema-types.ts';

export type FormValue = string | null | string[];

/** Perl's split: keeps leading empty fields, drops trailing ones. */
function perlSplit(text: string, separator: RegExp): string[] {
  const parts = text.split(separator);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** `+` → space and %XX → byte, on a byte string (latin1), then UTF-8 decoding of the bytes. */
function unescapeForm(bytes: string): string {
  const raw = bytes.replace(/\+/g, ' ').replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    return String.fromCharCode(parseInt(hex, 16));
  });
  return Buffer.from(raw, 'latin1').toString('utf8');
}

/**
 * Decode a form body or query string. Strings are taken as Node gives request targets: one char
 * per byte (latin1). Keys without `=` map to null.
 */
export function decodeUrlencoded(data: Buffer | string): Record<string, FormValue> {
  const text = typeof data === 'string' ? data : data.toString('latin1');
  const res: Record<string, FormValue> = Object.create(null);
  if (text === '' || text === '0') return res; // Perl: `return $res if !$data`
  for (const pair of perlSplit(text, /[&;]/)) {
    const [rawKey = '', rawValue] = perlSplit(pair, /=/);
    const key = unescapeForm(rawKey);
    if (rawValue === undefined) {
      res[key] = null;
      continue;
    }
    const value = unescapeForm(rawValue);
    const old = res[key];
    res[key] =
      old === undefined || old === null
        ? value
        : Array.isArray(old)
          ? [...old, value]
          : [old, value];
  }
  return res;
}

/**
 * Perl URI::Escape uri_unescape on a request path: %XX → byte, UTF-8 decoded. pveproxy unescapes
 * the whole path before routing, so an encoded UPID in /tasks/{upid}/status arrives decoded.
 */
export function unescapePath(rawPath: string): string {
  return unescapeForm(rawPath.replace(/\+/g, '%2B'));
}

/** Copy form values into parameter values (null stays null: "present without a value"). */
export function formToParams(form: Record<string, FormValue>): Record<string, ParamValue> {
  const params: Record<string, ParamValue> = Object.create(null);
  for (const [key, value] of Object.entries(form)) params[key] = value;
  return params;
}
