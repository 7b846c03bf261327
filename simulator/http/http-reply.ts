// What the simulator answers, as data (so faults, logging and delays can wrap it), and the one
// function that writes it to the socket. pveproxy-style replies get pveproxy's headers.
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { ApiError } from '../schema/pve-error.ts';

export type Reply =
  | {
      readonly kind: 'http';
      readonly status: number;
      /** Reason phrase; pveproxy uses the first line of its message here. */
      readonly reason?: string;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: string | Buffer;
      /** Add Server/Cache-Control/Pragma/Expires like pve-api-daemon (not for fault pages). */
      readonly pveHeaders?: boolean;
      readonly delayMs?: number;
    }
  | { readonly kind: 'drop'; readonly delayMs?: number }
  /**
   * A JSON body of `bytes` bytes written piece by piece, without Content-Length when chunked;
   * `gzip`: compressed whole first; `stall`: the first piece, then nothing (the socket open).
   */
  | {
      readonly kind: 'stream';
      readonly status: number;
      readonly bytes: number;
      readonly chunked: boolean;
      readonly gzip: boolean;
      readonly stall: boolean;
      readonly headers: Readonly<Record<string, string>>;
      readonly delayMs?: number;
    }
  | { readonly kind: 'hang' };

const JSON_TYPE = 'application/json;charset=UTF-8';

/** Reason phrases Node does not know (Cloudflare 52x, AnyEvent::HTTP 59x). */
const EXTRA_REASONS: Readonly<Record<number, string>> = {
  520: 'Web Server Returned an Unknown Error',
  521: 'Web Server Is Down',
  522: 'Connection Timed Out',
  523: 'Origin Is Unreachable',
  524: 'A Timeout Occurred',
  525: 'SSL Handshake Failed',
  526: 'Invalid SSL Certificate',
  530: 'Origin DNS Error',
  595: 'Connection refused',
  596: 'Request send failed',
  597: 'Body receive failed',
  599: 'Internal Exception',
};

export function defaultReason(status: number): string {
  return STATUS_CODES[status] ?? EXTRA_REASONS[status] ?? 'Unknown';
}

/**
 * The PVE JSON formatter: `{data}` (plus `total` for some lists) on success,
 * `{data:null, message, errors?}` on errors.
 */
export function jsonReply(
  status: number,
  data: unknown,
  message?: string,
  errors?: object,
  total?: number,
): Reply {
  const isError = status >= 400;
  const payload: Record<string, unknown> = { data: isError ? null : data };
  if (errors && Object.keys(errors).length > 0) payload.errors = errors;
  if (isError) payload.message = message || defaultReason(status);
  if (!isError && total) payload.total = total;
  return {
    kind: 'http',
    status,
    reason: isError ? firstLine(message ?? '') : 'OK',
    headers: { 'Content-Type': JSON_TYPE },
    body: JSON.stringify(payload),
    pveHeaders: true,
  };
}

export function apiErrorReply(error: ApiError): Reply {
  return jsonReply(error.status, null, error.message, error.errors);
}

/** AnyEvent.pm `error()`: the message is both reason and plain body, with no Content-Type. */
export function textError(status: number, message: string): Reply {
  return { kind: 'http', status, reason: firstLine(message), body: message, pveHeaders: true };
}

/** A reply with a reason phrase and no body (401s, 595 from a failed proxy connection). */
export function emptyReply(status: number, reason: string, delayMs = 0): Reply {
  return { kind: 'http', status, reason, pveHeaders: true, delayMs };
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? '';
}

/** Node rejects reason phrases with control characters; keep them printable. */
function safeReason(reason: string): string {
  return firstLine(reason).replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

export function writeReply(res: ServerResponse, reply: Extract<Reply, { kind: 'http' }>): void {
  const body = reply.body === undefined ? Buffer.alloc(0) : Buffer.from(reply.body);
  const headers: Record<string, string> = {};
  if (reply.pveHeaders) {
    const now = new Date().toUTCString();
    Object.assign(headers, {
      'Cache-Control': 'max-age=0',
      Expires: now,
      Pragma: 'no-cache',
      Server: 'pve-api-daemon/3.0',
      // pveproxy drops keep-alive after any error status.
      Connection: reply.status >= 400 ? 'close' : 'Keep-Alive',
    });
  }
  Object.assign(headers, reply.headers ?? {}, { 'Content-Length': String(body.length) });
  const reason =
    safeReason(reply.reason || defaultReason(reply.status)) || defaultReason(reply.status);
  res.writeHead(reply.status, reason, headers);
  res.end(body);
}

const PIECE = 64 * 1024;

/**
 * Writes `{"data":"xxx…"}` of exactly `bytes` bytes (before any compression), a piece at a time
 * as the socket drains, and stops when the client goes away (a capped reader cancels long before
 * the end). `onEnd` gets the bytes handed to the socket (compressed ones, for gzip).
 */
export function writeStream(
  res: ServerResponse,
  reply: Extract<Reply, { kind: 'stream' }>,
  onEnd: (bytes: number, complete: boolean) => void,
): void {
  const compressed = reply.gzip ? gzipped(reply.bytes) : null;
  const headers: Record<string, string> = {
    'Content-Type': JSON_TYPE,
    Server: 'pve-api-daemon/3.0',
    ...(compressed ? { 'Content-Encoding': 'gzip' } : {}),
    ...(reply.chunked ? {} : { 'Content-Length': String(compressed?.length ?? reply.bytes) }),
    ...reply.headers,
  };
  res.writeHead(reply.status, defaultReason(reply.status), headers);
  const pieces = compressed ? slices(compressed) : plainPieces(reply.bytes);
  let written = 0;
  let ended = false;
  const end = (complete: boolean): void => {
    if (ended) return;
    ended = true;
    onEnd(written, complete);
  };
  res.once('close', () => end(false));
  const pump = (): void => {
    while (!res.destroyed) {
      const next = pieces.next();
      if (next.done) {
        res.end(() => end(true));
        return;
      }
      written += next.value.length;
      const more = res.write(next.value);
      // A stalled stream keeps its socket open with nothing more on it.
      if (reply.stall) return;
      if (!more) {
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

/** The plain body's pieces, made as they are sent: 512 MiB never sits in memory. */
function* plainPieces(bytes: number): Generator<Buffer> {
  const head = Buffer.from('{"data":"');
  const tail = Buffer.from('"}');
  const filler = Buffer.alloc(PIECE, 'x');
  yield head;
  for (let left = bytes - head.length - tail.length; left > 0; left -= PIECE)
    yield left >= PIECE ? filler : filler.subarray(0, left);
  yield tail;
}

function* slices(body: Buffer): Generator<Buffer> {
  for (let at = 0; at < body.length; at += PIECE) yield body.subarray(at, at + PIECE);
}

/** The plain body of `bytes` bytes, gzip-compressed (a run of x: about a thousandth its size). */
function gzipped(bytes: number): Buffer {
  const plain = Buffer.alloc(bytes, 'x');
  plain.write('{"data":"', 0);
  plain.write('"}', bytes - 2);
  return gzipSync(plain);
}
