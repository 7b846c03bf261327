// The request body caps, first of all the work a request gets: a declared Content-Length over
// the cap is refused at once; a body sent without one (chunked) is counted as it is read, and
// refused as soon as it passes the cap. Hono's bodyLimit does the same, but then answers at once
// while the client is still sending: the runtime closes the connection on the unread rest, and a
// client or proxy still writing sees a reset instead of the 413 (wrangler dev's proxy turns it
// into "503 Your worker restarted mid-request"). So, like a web server's lingering close, the
// rest is read and dropped before answering, within a bound (LINGER_BYTES more, LINGER_MS): a
// body larger than that still ends in a reset, but no client that stops in time misses the 413.
// The bytes read under the cap become the request's body again, for the handlers after.

import type { Context, MiddlewareHandler } from 'hono';
import { systemClock } from '../clock';

/** Beyond the cap, how much more is read and dropped before the 413, at most. */
export const LINGER_BYTES = 64 * 1024 * 1024;
/** And for how long, at most. */
export const LINGER_MS = 10_000;

export function bodyCap(
  maxBytes: number,
  refuse: (c: Context) => Response | Promise<Response>,
): MiddlewareHandler {
  return async (c, next) => {
    const request = c.req.raw;
    if (!request.body) return next();
    const declared = request.headers.get('content-length');
    // Per RFC 9112 §6.3, Transfer-Encoding wins over Content-Length: only a length alone counts.
    // A length that is not one number ("5, 5", "abc") is not trusted: the body is counted.
    if (declared !== null && /^\d+$/.test(declared) && !request.headers.has('transfer-encoding')) {
      if (Number(declared) > maxBytes) {
        await linger(request.body.getReader());
        return refuse(c);
      }
      return next();
    }
    const read = await readUpTo(request.body.getReader(), maxBytes);
    if (read === null) return refuse(c);
    c.req.raw = new Request(request, { body: read });
    return next();
  };
}

/** The whole body if it is at most `max` bytes; else null, once the rest was lingered over. */
async function readUpTo(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  max: number,
): Promise<Uint8Array | null> {
  let buffer = new Uint8Array(Math.min(max, 64 * 1024));
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return buffer.subarray(0, size);
    if (size + value.length > max) {
      await linger(reader);
      return null;
    }
    if (size + value.length > buffer.length) {
      const grown = new Uint8Array(Math.min(max, Math.max(size + value.length, buffer.length * 2)));
      grown.set(buffer.subarray(0, size));
      buffer = grown;
    }
    buffer.set(value, size);
    size += value.length;
  }
}

/** Reads and drops the rest of a body, up to LINGER_BYTES more or LINGER_MS, then lets go. */
async function linger(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const until = systemClock.now() + LINGER_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const out = new Promise<'out'>((resolve) => {
    timer = setTimeout(() => resolve('out'), LINGER_MS);
  });
  try {
    for (let dropped = 0; dropped < LINGER_BYTES && systemClock.now() < until; ) {
      const read = await Promise.race([reader.read(), out]);
      if (read === 'out' || read.done) return;
      dropped += read.value.length;
    }
  } catch {
    // The client went away: nothing more to read.
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
}
