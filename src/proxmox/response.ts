// Reads a pveproxy response into its `data`, or classifies what answered instead: PVE's own
// errors (with `errors` per parameter, and `message` since libpve-http-server-perl 5.2; older
// servers only have the reason phrase), Cloudflare Access, Cloudflare Tunnel, redirects, HTML.

import type { PveError, PveFailure } from './errors';

/** Far above any real answer (a 10,000-guest /cluster/resources is about 5 MiB). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
const NODE_IN_PATH = /^\/nodes\/([^/]+)\//;

type Fail = (failure: PveFailure) => PveError;

/** A successful answer: its `data`, and the `total` PVE adds to some lists (task logs), if any. */
export interface Envelope {
  data: unknown;
  total: number | null;
}

/**
 * `scrub` removes configured secrets from an error's text before any of it is cut to a first line
 * or a length: cut first, a secret split by the cut would leave its first part behind.
 * `framed`: the answer came over HTTP from the runtime's own fetch, which reads a body framed by
 * its length to that length and no further (see readText); not through a binding. Unless told,
 * every body is read piece by piece, counted.
 */
export async function readData(
  response: Response,
  path: string,
  fail: Fail,
  timeoutMs: number,
  scrub: (text: string) => string = (text) => text,
  framed = false,
): Promise<Envelope> {
  const { status } = response;
  const contentType = response.headers.get('content-type') ?? '';
  const statusText = scrub(response.statusText);

  if (status >= 300 && status < 400) {
    await response.body?.cancel();
    const location = stripQuery(response.headers.get('location'));
    if (location && /(^|\.)cloudflareaccess\.com$/i.test(hostOf(location))) {
      throw fail({ kind: 'access_denied', status, location });
    }
    throw fail({ kind: 'redirect', status, location });
  }

  const read = await readText(response, fail, timeoutMs, framed);
  // A successful answer is scrubbed whole where the call's result is built.
  const text = status === 200 ? read : scrub(read);
  const json = /json/i.test(contentType) ? parseJson(text) : undefined;

  if (json === undefined) {
    throw classifyNonJson(status, contentType, text, path, statusText, fail);
  }
  const body = (json ?? {}) as {
    data?: unknown;
    errors?: unknown;
    message?: unknown;
    total?: unknown;
  };
  if (status === 200) {
    if (!('data' in body))
      throw fail({ kind: 'bad_response', status, problem: 'no "data" member' });
    const total = Number(body.total);
    return {
      data: body.data,
      total: body.total !== undefined && Number.isSafeInteger(total) ? total : null,
    };
  }
  const message = pveMessage(body.message, statusText);
  throw fail(classifyPveError(status, message, body.errors, path));
}

/**
 * The body as text, read with a byte cap whether or not Content-Length is sent: a chunked body
 * that never ends, or a huge one, stops at the cap instead of filling the isolate's memory.
 */
async function readText(
  response: Response,
  fail: Fail,
  timeoutMs: number,
  framed: boolean,
): Promise<string> {
  const { headers } = response;
  const length = headers.get('content-length');
  const declared = Number(length ?? '0');
  if (declared > MAX_BODY_BYTES) {
    await response.body?.cancel();
    throw fail({
      kind: 'too_large',
      status: response.status,
      limitBytes: MAX_BODY_BYTES,
      declaredBytes: declared,
    });
  }
  if (!response.body) return '';
  try {
    // Framed by its length alone, and as sent: workerd reads exactly the declared bytes, so the
    // runtime reads it whole, at once. Not when Transfer-Encoding is sent too (workerd then reads
    // it chunked, whatever its length says), nor when compressed (workerd inflates it, and the
    // length is the compressed one's), nor through a binding (the Workers VPC service: how it
    // frames a body has not been tried here): those are read piece by piece, counted.
    if (
      framed &&
      length !== null &&
      DECIMAL.test(length) &&
      !headers.has('transfer-encoding') &&
      !headers.has('content-encoding')
    )
      return await response.text();
  } catch (err) {
    throw readFailure(err, fail, timeoutMs);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw fail({ kind: 'too_large', status: response.status, limitBytes: MAX_BODY_BYTES });
      }
      text += decoder.decode(value, { stream: true });
    }
    return text + decoder.decode();
  } catch (err) {
    if (err instanceof Error && err.name === 'PveError') throw err;
    throw readFailure(err, fail, timeoutMs);
  }
}

/** A Content-Length as HTTP writes it: digits only. */
const DECIMAL = /^\d+$/;

/** What stopped a body's read: the request's time running out, or the connection. */
function readFailure(err: unknown, fail: Fail, timeoutMs: number): PveError {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
    return fail({ kind: 'timeout', timeoutMs });
  return fail({ kind: 'network', cause: 'the connection broke while reading the response' });
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function classifyPveError(
  status: number,
  message: string,
  errors: unknown,
  path: string,
): PveFailure {
  switch (status) {
    case 400:
      return { kind: 'invalid_parameters', status, message, params: stringRecord(errors) };
    case 401:
      return { kind: 'auth_failed', status, reason: message };
    case 403: {
      // `A|B`: PVE's check for any one of them (check_any).
      const m = /^Permission check failed \((\S.*), ([A-Za-z.]+(?:\|[A-Za-z.]+)*)\)$/.exec(message);
      return m
        ? { kind: 'forbidden', status, message, path: m[1], privilege: m[2] }
        : { kind: 'forbidden', status, message };
    }
    case 500:
      return { kind: 'server_error', status, message };
    case 501:
      return { kind: 'not_implemented', status, message };
    default:
      return classifyOther(status, message, path);
  }
}

function classifyNonJson(
  status: number,
  contentType: string,
  text: string,
  path: string,
  statusText: string,
  fail: Fail,
): PveError {
  const lower = text.slice(0, 4096).toLowerCase();
  if (lower.includes('cloudflareaccess.com') || lower.includes('cloudflare access')) {
    return fail({ kind: 'access_denied', status });
  }
  const cfCode = /error code:?\s*(1\d{3})/i.exec(text.slice(0, 4096))?.[1];
  if (status === 530 || cfCode) return fail({ kind: 'tunnel_error', status, code: cfCode });
  // pveproxy's own errors without a JSON body: 401 (empty body), 501 (plain reason), 595/596.
  const message =
    pveMessage(undefined, statusText) || text.trim().split('\n')[0]?.slice(0, 200) || '';
  if (status === 401)
    return fail({ kind: 'auth_failed', status, reason: message || 'Authentication failed!' });
  // pveproxy's own 403s are JSON; an HTML or plain 403 comes from in front of it. Cloudflare
  // Access's service-auth refusal is such a page and says only "Forbidden".
  if (status === 403) return fail({ kind: 'access_denied', status, inferred: true });
  if (status === 501) return fail({ kind: 'not_implemented', status, message });
  if (status >= 595 && status <= 599) return fail(classifyOther(status, message, path));
  if ((status === 502 || status === 503 || status === 504) && !/json/i.test(contentType)) {
    return fail({ kind: 'tunnel_error', status });
  }
  return fail({ kind: 'not_json', status, contentType });
}

function classifyOther(status: number, message: string, path: string): PveFailure {
  if (status >= 595 && status <= 599) {
    return {
      kind: 'node_unreachable',
      status,
      message: message || 'proxy error',
      node: NODE_IN_PATH.exec(path)?.[1],
    };
  }
  return { kind: 'http_error', status, message: message || 'no message' };
}

function pveMessage(message: unknown, statusText: string): string {
  const text = typeof message === 'string' && message.trim() !== '' ? message : statusText;
  return text.trim().split('\n')[0]?.slice(0, 500) ?? '';
}

/** Each member as text; fromEntries, so a member named __proto__ stays a member. */
function stringRecord(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, String(v).trim().slice(0, 500)]),
  );
}

function stripQuery(location: string | null): string | undefined {
  if (!location) return undefined;
  return location.split(/[?#]/)[0];
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
