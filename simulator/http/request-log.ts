// The per-tenant log of API requests (control requests are not logged), for tests to assert what
// a client really sent: encoding, framing (Content-Length vs chunked) and redacted credentials.
import type { IncomingHttpHeaders } from 'node:http';
import { redactAuthorization } from './auth.ts';
import { unescapePath, type FormValue } from './form-decode.ts';

export interface LoggedRequest {
  readonly seq: number;
  readonly time: string;
  readonly method: string;
  /** The path as pveproxy routes it (percent-decoded), without the /t/<tenant> prefix or query. */
  readonly path: string;
  /** The path exactly as sent (still percent-encoded), to check a client's encoding. */
  readonly rawPath: string;
  readonly query: Record<string, FormValue>;
  readonly headers: Record<string, string | string[]>;
  readonly body: string | null;
  readonly params: Record<string, unknown> | null;
  readonly contentLength: number | null;
  readonly chunked: boolean;
  /** Set when answered; null while pending, or if the socket was dropped or the reply hangs. */
  status: number | null;
  /** A streamed reply (fault `streamBytes`): body bytes handed to the socket, and whether all were. */
  streamed?: { bytes: number; complete: boolean };
}

/** Oldest entries are dropped past this, so a long-running simulator stays bounded. */
const MAX_ENTRIES = 5000;
const SECRET_HEADERS = new Set(['cf-access-client-secret', 'cookie', 'csrfpreventiontoken']);

function redactHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const res: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (name === 'authorization') res[name] = redactAuthorization(String(value));
    else if (SECRET_HEADERS.has(name)) res[name] = '<redacted>';
    else res[name] = value;
  }
  return res;
}

export interface RequestFacts {
  readonly method: string;
  readonly rawPath: string;
  readonly query: Record<string, FormValue>;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly params: Record<string, unknown> | null;
  readonly chunked: boolean;
}

export class RequestLog {
  private entries: LoggedRequest[] = [];
  private seq = 0;

  record(facts: RequestFacts, now: number): LoggedRequest {
    const length = facts.headers['content-length'];
    const entry: LoggedRequest = {
      seq: ++this.seq,
      time: new Date(now).toISOString(),
      method: facts.method,
      path: unescapePath(facts.rawPath),
      rawPath: facts.rawPath,
      query: facts.query,
      headers: redactHeaders(facts.headers),
      body: facts.body.length > 0 ? facts.body.toString('utf8') : null,
      params: facts.params,
      contentLength: length === undefined ? null : Number(length),
      chunked: facts.chunked,
      status: null,
    };
    this.entries.push(entry);
    if (this.entries.length > MAX_ENTRIES)
      this.entries.splice(0, this.entries.length - MAX_ENTRIES);
    return entry;
  }

  list(): readonly LoggedRequest[] {
    return this.entries;
  }

  clear(): void {
    this.entries = [];
  }
}
