// The Proxmox VE API client: fetch only, so it runs in workerd. It talks to pveproxy directly
// (PVE_BASE_URL) or through a service binding (Workers VPC service over Cloudflare Tunnel),
// sends fixed-length form bodies, never follows redirects, bounds every call with a timeout,
// and turns every failure into a PveError. Knows nothing of MCP.

import { z } from 'zod';
import { type Clock, systemClock } from '../clock';
import { scrubberFor, type Scrubber } from '../secrets/scrub';
import { PveError, type PveFailure, type SettingNames } from './errors';
import { type Held, keepHeld, keptHeld, refusalPaths } from './refusal';
import { readData } from './response';
import { accessPermissions } from './schemas';

export interface PveClientConfig {
  /** Ends in /api2/json, without a trailing slash. */
  baseUrl: string;
  tokenId: string;
  tokenSecret: string;
  accessClientId?: string;
  accessClientSecret?: string;
  /** A service binding to pveproxy; when set, requests go through it instead of the internet. */
  binding?: { fetch(input: string, init?: RequestInit): Promise<Response> };
  timeoutMs: number;
  /** How its messages name its settings (default: the single-cluster ones). */
  names?: SettingNames;
  /**
   * The token PVE_IDENTITIES gives a person on cluster `cluster` (their own, or the fallback's): a
   * refusal whose text names no privilege is explained from what it holds (./refusal.ts), theirs
   * to know as they act with it. Never for the server's own token, whose privileges are not the
   * caller's business.
   */
  explainRefusals?: { cluster: string };
}

/** One upstream exchange, for the per-call log line. */
export interface UpstreamCall {
  method: string;
  path: string;
  status: number | null;
  ms: number;
}

type Query = Record<string, string | number | undefined>;
/** Form parameters; a list is sent as the same key repeated (PVE's array parameters, e.g. an argv). */
export type FormParams = Record<string, string | number | boolean | readonly string[] | undefined>;

/** One request's trace: the headers that carry its span (W3C Trace Context), and its end. */
export interface RequestTrace {
  headers: Record<string, string>;
  /** `status`: the answer's (null: none came); `error`: why it failed, if it did (its kind). */
  end(status: number | null, error?: string): void;
}

/** Per-call options: a caller with a deadline of its own (e.g. `wait`) bounds the call by it. */
export interface CallOptions {
  /** At most this long for the call, retry included (never more than the configured timeout). */
  timeoutMs?: number;
}

const RETRYABLE_STATUS = new Set([502, 503, 504, 530]);
/** A retry is not worth starting with less time than this left. */
const MIN_RETRY_MS = 250;

export class PveClient {
  readonly calls: UpstreamCall[] = [];
  /** The answers of `shared` GETs, by request (a client serves one call). */
  private readonly kept = new Map<string, Promise<unknown>>();
  /** Removes the token secret and the Access secret from anything upstream sends back. */
  readonly scrub: Scrubber;
  /** Opens each request's span (a child of the call's trace), once told. */
  private traceRequest: ((method: string, path: string) => RequestTrace) | null = null;

  constructor(
    private readonly config: PveClientConfig,
    /** Deadlines and the call log's timings; the Runtime's clock. */
    readonly clock: Clock = systemClock,
  ) {
    this.scrub = scrubberFor([config.tokenSecret, config.accessClientSecret]);
  }

  /** Opens a span for each request (`path`: without its query) and sends its headers. */
  traceWith(open: (method: string, path: string) => RequestTrace): void {
    this.traceRequest = open;
  }

  /** The id of the API token its requests go with (`user@realm!name`; never the secret). */
  get tokenId(): string {
    return this.config.tokenId;
  }

  /** GET, retried once on a network error or a 502/503/504/530 (reads are safe to repeat). */
  async get<S extends z.ZodType>(
    path: string,
    schema: S,
    query: Query = {},
    options: CallOptions = {},
  ): Promise<z.output<S>> {
    return (await this.getPage(path, schema, query, options)).data;
  }

  /**
   * A GET whose answer the readers of one moment of this call share (the guest's facts a policy
   * reads, then what the person asked, or the preview, or a read tool's answer, shows of it):
   * read once, unless `fresh` (read again, and that answer kept). A failed read is not kept, nor
   * anything read before forgetShared. Never for what a write is decided on: that is read when it
   * is decided.
   */
  async shared<S extends z.ZodType>(
    path: string,
    schema: S,
    query: Query = {},
    options: CallOptions = {},
    fresh = false,
  ): Promise<z.output<S>> {
    const key = withQuery(path, query);
    let answer = fresh ? undefined : this.kept.get(key);
    if (!answer) {
      const read = this.get(path, ANY, query, options);
      answer = read;
      this.kept.set(key, read);
      read.catch(() => {
        if (this.kept.get(key) === read) this.kept.delete(key);
      });
    }
    const data = await answer;
    const parsed = schema.safeParse(data);
    if (!parsed.success)
      throw new PveError(
        this.scrub.deep(badAnswer(parsed.error, 200)),
        'GET',
        path,
        this.config.names,
      );
    return parsed.data;
  }

  /**
   * A person answered (the guest's facts are read again): what was read before is not shared
   * after, whoever reads it next.
   */
  forgetShared(): void {
    this.kept.clear();
  }

  /** GET, with the `total` PVE sends beside `data` for some lists (e.g. task logs). */
  async getPage<S extends z.ZodType>(
    path: string,
    schema: S,
    query: Query = {},
    options: CallOptions = {},
  ): Promise<{ data: z.output<S>; total: number | null }> {
    const target = withQuery(path, query);
    const deadline =
      this.clock.now() +
      Math.min(options.timeoutMs ?? this.config.timeoutMs, this.config.timeoutMs);
    try {
      return await this.exchange(
        'GET',
        target,
        path,
        schema,
        undefined,
        deadline - this.clock.now(),
      );
    } catch (err) {
      const left = deadline - this.clock.now();
      if (!(err instanceof PveError) || !isRetryable(err.failure) || left < MIN_RETRY_MS) throw err;
      return this.exchange('GET', target, path, schema, undefined, left);
    }
  }

  /**
   * A write: POST or PUT with a URL-encoded, fixed-length body; DELETE with its parameters in the
   * query string (pveproxy reads them there). Never retried: the write may have happened.
   */
  async write<S extends z.ZodType>(
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    schema: S,
    params: FormParams,
  ): Promise<z.output<S>> {
    if (method !== 'DELETE')
      return (
        await this.exchange(method, path, path, schema, encodeForm(params), this.config.timeoutMs)
      ).data;
    const query = Object.fromEntries(
      Object.entries(params).map(([k, v]) => [k, typeof v === 'boolean' ? (v ? '1' : '0') : v]),
    ) as Query;
    const target = withQuery(path, query);
    return (await this.exchange('DELETE', target, path, schema, undefined, this.config.timeoutMs))
      .data;
  }

  private async exchange<S extends z.ZodType>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    target: string,
    path: string,
    schema: S,
    body: string | undefined,
    timeoutMs: number,
  ): Promise<{ data: z.output<S>; total: number | null }> {
    const started = this.clock.now();
    const call: UpstreamCall = { method, path, status: null, ms: 0 };
    this.calls.push(call);
    const span = this.traceRequest?.(method, path);
    /** Why the request failed where its status does not say (error.type). */
    let failed: string | undefined;
    // Every failure's text is scrubbed here, once, before any message is built from it.
    const fail = (failure: PveFailure): PveError =>
      new PveError(this.scrub.deep(failure), method, path, this.config.names);
    const budget = Math.max(1, Math.round(timeoutMs));
    let response: Response;
    try {
      response = await this.send(method, target, body, budget, span?.headers);
    } catch (err) {
      call.ms = this.clock.now() - started;
      failed = isTimeout(err) ? 'timeout' : 'network';
      span?.end(null, failed);
      if (isTimeout(err)) throw fail({ kind: 'timeout', timeoutMs: budget });
      throw fail({ kind: 'network', cause: networkCause(err) });
    }
    call.status = response.status;
    let measured = false;
    let spanEnded = false;
    const endSpan = (): void => {
      if (spanEnded) return;
      spanEnded = true;
      span?.end(response.status, failed);
    };
    try {
      const { data, total } = await readData(
        response,
        path,
        fail,
        budget,
        this.scrub.text,
        !this.config.binding,
      );
      const parsed = schema.safeParse(data);
      if (!parsed.success) throw fail(badAnswer(parsed.error, response.status));
      return { data: parsed.data, total };
    } catch (err) {
      if (err instanceof PveError) failed = err.failure.kind;
      // The refused request's span ends here: the reads explaining it are spans of their own.
      endSpan();
      const explain = this.config.explainRefusals;
      if (!explain || !(err instanceof PveError) || !namesNoPrivilege(err.failure)) throw err;
      // Never for the reads below themselves: a refusal of one is not explained again.
      if (path === HELD_PATH) throw err;
      call.ms = this.clock.now() - started;
      measured = true;
      const params = new URLSearchParams(body ?? target.split('?')[1] ?? '');
      const { paths, needs } = refusalPaths(method, path, params);
      // Within what is left of the refused request's own time, and never longer than HELD_READ_MS.
      const left = Math.min(HELD_READ_MS, timeoutMs - call.ms);
      const held = await Promise.all(paths.map((p) => this.heldOn(explain.cluster, p, left)));
      // The refused request stays the call's last exchange: its status is the call's.
      this.calls.splice(this.calls.indexOf(call), 1);
      this.calls.push(call);
      throw fail({ ...err.failure, held, ...(needs ? { needs } : {}) });
    } finally {
      if (!measured) call.ms = this.clock.now() - started;
      endSpan();
    }
  }

  /**
   * What this client's token holds on an ACL path (GET /access/permissions), kept HELD_TTL_MS
   * per cluster, token and path (settled answers only); null privileges where it was not read.
   */
  private async heldOn(cluster: string, path: string, timeoutMs: number): Promise<Held> {
    const key = `${cluster} ${this.config.tokenId} ${path}`;
    const known = keptHeld(key, this.clock.now());
    if (known) return { path, privileges: known };
    if (timeoutMs < 1) return { path, privileges: null };
    try {
      const target = withQuery(HELD_PATH, { path });
      const answer = await this.exchange(
        'GET',
        target,
        HELD_PATH,
        accessPermissions,
        undefined,
        timeoutMs,
      );
      const privileges = Object.keys(answer.data[path] ?? {}).sort();
      keepHeld(key, privileges, this.clock.now());
      return { path, privileges };
    } catch {
      return { path, privileges: null };
    }
  }

  private send(
    method: string,
    target: string,
    body: string | undefined,
    timeoutMs: number,
    trace: Record<string, string> = {},
  ): Promise<Response> {
    const { config } = this;
    const headers = new Headers({
      Authorization: `PVEAPIToken=${config.tokenId}=${config.tokenSecret}`,
      Accept: 'application/json',
    });
    if (config.accessClientId && config.accessClientSecret) {
      headers.set('CF-Access-Client-Id', config.accessClientId);
      headers.set('CF-Access-Client-Secret', config.accessClientSecret);
    }
    if (body !== undefined) headers.set('Content-Type', 'application/x-www-form-urlencoded');
    for (const [name, value] of Object.entries(trace)) headers.set(name, value);
    const init: RequestInit = {
      method,
      headers,
      // A string body has a known length, so workerd sends Content-Length, never chunked:
      // pveproxy answers 501 to chunked bodies.
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    };
    const url = `${config.baseUrl}${target}`;
    return config.binding ? config.binding.fetch(url, init) : fetch(url, init);
  }
}

/** How long reading what a token holds may take, after a refusal. */
const HELD_READ_MS = 2_000;
const HELD_PATH = '/access/permissions';

/** A refusal whose text names no privilege and no other reason ("Permission check failed"). */
function namesNoPrivilege(f: PveFailure): f is Extract<PveFailure, { kind: 'forbidden' }> {
  return f.kind === 'forbidden' && f.message === 'Permission check failed';
}

/** Any answer: a shared GET is parsed by each reader with its own schema. */
const ANY = z.unknown();

/** The failure for an answer that is not what `schema` wants: its first issue, and where. */
function badAnswer(error: z.ZodError, status: number): PveFailure {
  const issue = error.issues[0];
  const at = issue?.path.length ? ` at data.${issue.path.join('.')}` : '';
  return { kind: 'bad_response', status, problem: `${issue?.message ?? 'invalid'}${at}` };
}

function withQuery(path: string, query: Query): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
  return qs.size ? `${path}?${qs}` : path;
}

/** Booleans become 1/0: pveproxy rejects `true` in form bodies. URLSearchParams encodes `;`
 * and `&`, which pveproxy would otherwise split pairs on. */
export function encodeForm(params: FormParams): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) {
      // PVE's form decoder turns `k=` into undef and drops the list gathered so far: never send it.
      for (const item of v as readonly string[]) {
        if (item === '') throw new Error(`empty item in the list parameter ${k}`);
        form.append(k, item);
      }
    } else form.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  return form.toString();
}

function isRetryable(f: PveFailure): boolean {
  if (f.kind === 'network') return true;
  return 'status' in f && RETRYABLE_STATUS.has(f.status) && f.kind !== 'access_denied';
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
}

function networkCause(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  // Keep it short and free of anything but the runtime's own description.
  return text.split('\n')[0]?.slice(0, 200) || 'connection failed';
}
