// Parameter extraction like pve-http-server extract_params: POST/PUT bodies are JSON when the
// Content-Type says application/json, otherwise form-decoded; query parameters override them.
import type { IncomingHttpHeaders } from 'node:http';
import { decodeUrlencoded, formToParams } from './form-decode.ts';
import type { Params, ParamValue } from '../schema/schema-types.ts';

/** pve-http-server parse_content_type: the media type before any `;` or `,`, case kept. */
export function parseContentType(header: string): string {
  return header.split(/\s*[;,]\s*/)[0] ?? '';
}

/** A Perl-flavoured decode_json failure, as pveproxy reports it in a 500 body. */
function malformedJson(text: string, err: unknown): Error {
  const position = /position (\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
  const offset = position === undefined ? 0 : Number(position);
  const rest = text.slice(offset);
  const before = rest === '' ? '(end of string)' : rest.slice(0, 20);
  return new Error(
    'malformed JSON string, neither tag, array, object, number, string or atom, at character offset ' +
      `${offset} (before "${before}") at /usr/share/perl5/PVE/APIServer/AnyEvent.pm line 933.\n`,
  );
}

const isJsonType = (headers: IncomingHttpHeaders) =>
  headers['content-type'] !== undefined &&
  parseContentType(headers['content-type']) === 'application/json';

/** Body parameters alone (for the request log); null when there is no decodable object. */
export function bodyParams(
  headers: IncomingHttpHeaders,
  body: Buffer,
): Record<string, unknown> | null {
  if (body.length === 0) return null;
  if (!isJsonType(headers)) return formToParams(decodeUrlencoded(body));
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
    return isObject ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** All parameters of an API request; throws (→ 500) on a malformed JSON body. */
export function extractParams(
  method: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  rawQuery: string,
): Params {
  let params: Params = Object.create(null);
  if (method === 'POST' || method === 'PUT') {
    if (isJsonType(headers)) {
      const text = body.toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        throw malformedJson(text, err);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new Error(
          'Not a HASH reference at /usr/share/perl5/PVE/APIServer/AnyEvent.pm line 971.\n',
        );
      }
      params = Object.assign(Object.create(null), parsed as Record<string, ParamValue>);
    } else {
      params = formToParams(decodeUrlencoded(body));
    }
  }
  Object.assign(params, formToParams(decodeUrlencoded(rawQuery)));
  delete params._dc; // ExtJS cache buster, dropped by pveproxy
  return params;
}
