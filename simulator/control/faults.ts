// Injected faults: one-shot (or `times`-shot) misbehaviour applied before pveproxy-like handling
// (after the request is logged, before auth), to play what sits in front of PVE (Cloudflare Access
// pages, 502/530 "error code: 1033"), network trouble (drops, hangs, delays) or a failing task.
// Matching: first queued fault (FIFO) whose optional method and path regex (on the decoded path
// below /api2/json) match. A fault with status/body/reason/headers answers instead of PVE
// (status defaults to 500; a string body is sent verbatim as text/plain unless contentType says
// otherwise, an object body as JSON); with only delayMs it delays the normal answer.
// `streamBytes` answers 200 with a JSON body of that many bytes written in pieces, chunked (no
// Content-Length) unless `chunked: false`: what a runaway or hostile upstream would send. With it,
// `gzip` compresses the body (Content-Encoding: gzip; a declared length is the compressed one's),
// `hang` sends the first piece and then nothing, keeping the socket open, and `headers` are sent
// too (a Content-Length beside chunked framing, say).
import type { Reply } from '../http/http-reply.ts';

export interface FaultSpec {
  readonly method?: string;
  /** JS regex source, matched against the path below /api2/json (e.g. '^/cluster/resources$'). */
  readonly path: string;
  readonly times: number;
  readonly status?: number;
  readonly body?: string | Record<string, unknown> | unknown[];
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
  readonly reason?: string;
  readonly delayMs?: number;
  readonly drop?: boolean;
  readonly hang?: boolean;
  /** Answer a body of this many bytes, streamed. */
  readonly streamBytes?: number;
  /** With streamBytes: no Content-Length (the default), or false to declare it. */
  readonly chunked?: boolean;
  /** With streamBytes: the body gzip-compressed (at most MAX_GZIP_BYTES before it). */
  readonly gzip?: boolean;
  /** Not an HTTP fault: the next matching create task ends with this exitstatus. */
  readonly taskExitStatus?: string;
}

interface QueuedFault {
  readonly id: number;
  readonly spec: FaultSpec;
  readonly regex: RegExp;
  remaining: number;
}

type Parsed = { ok: true; spec: FaultSpec } | { ok: false; error: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Check a control-API fault description; everything but `path` is optional. */
export function parseFaultSpec(input: unknown): Parsed {
  if (!isRecord(input)) return { ok: false, error: 'fault must be a JSON object' };
  const { path, method, times = 1, body, contentType, headers, reason, delayMs } = input;
  const { drop, hang, taskExitStatus, streamBytes, chunked, gzip } = input;
  // status 0 or null means "no status": e.g. { delayMs, status: 0 } only delays the real answer.
  const status = input.status === 0 || input.status === null ? undefined : input.status;
  if (typeof path !== 'string') return { ok: false, error: "'path' (a regex source) is required" };
  try {
    new RegExp(path);
  } catch {
    return { ok: false, error: `'path' is not a valid regex: ${path}` };
  }
  const checks: [boolean, string][] = [
    [method === undefined || typeof method === 'string', "'method' must be a string"],
    [Number.isInteger(times) && (times as number) >= 1, "'times' must be an integer >= 1"],
    [status === undefined || isStatus(status), "'status' must be an integer 100-999"],
    [
      body === undefined || ['string', 'object'].includes(typeof body),
      "'body' must be a string or JSON",
    ],
    [
      contentType === undefined || typeof contentType === 'string',
      "'contentType' must be a string",
    ],
    [headers === undefined || isRecord(headers), "'headers' must be an object"],
    [reason === undefined || typeof reason === 'string', "'reason' must be a string"],
    [
      delayMs === undefined || (typeof delayMs === 'number' && delayMs >= 0),
      "'delayMs' must be >= 0",
    ],
    [
      taskExitStatus === undefined || typeof taskExitStatus === 'string',
      "'taskExitStatus': a string",
    ],
    [
      streamBytes === undefined ||
        (Number.isInteger(streamBytes) &&
          (streamBytes as number) >= 16 &&
          (streamBytes as number) <= MAX_STREAM_BYTES),
      `'streamBytes' must be an integer from 16 to ${MAX_STREAM_BYTES}`,
    ],
    [chunked === undefined || typeof chunked === 'boolean', "'chunked' must be true or false"],
    [
      drop !== true || (hang !== true && streamBytes === undefined),
      "'drop' is a fault of its own: not with 'hang' or 'streamBytes'",
    ],
    [
      gzip === undefined ||
        gzip === false ||
        (gzip === true && typeof streamBytes === 'number' && streamBytes <= MAX_GZIP_BYTES),
      `'gzip' must be true or false, and true only with a streamBytes of at most ${MAX_GZIP_BYTES}`,
    ],
  ];
  const failed = checks.find(([ok]) => !ok);
  if (failed) return { ok: false, error: failed[1] };
  const spec: FaultSpec = {
    path,
    times: times as number,
    ...(method !== undefined ? { method: method as string } : {}),
    ...(status !== undefined ? { status: status as number } : {}),
    ...(body !== undefined ? { body: body as FaultSpec['body'] } : {}),
    ...(contentType !== undefined ? { contentType: contentType as string } : {}),
    ...(headers !== undefined ? { headers: stringRecord(headers as Record<string, unknown>) } : {}),
    ...(reason !== undefined ? { reason: reason as string } : {}),
    ...(delayMs !== undefined ? { delayMs: delayMs as number } : {}),
    ...(drop === true ? { drop: true } : {}),
    ...(hang === true ? { hang: true } : {}),
    ...(taskExitStatus !== undefined ? { taskExitStatus: taskExitStatus as string } : {}),
    ...(streamBytes !== undefined
      ? {
          streamBytes: streamBytes as number,
          chunked: chunked !== false,
          ...(gzip === true ? { gzip: true } : {}),
        }
      : {}),
  };
  return { ok: true, spec };
}

/** Streams are written lazily, a piece at a time: the cap only bounds how long one can run. */
const MAX_STREAM_BYTES = 512 * 1024 * 1024;
/** A compressed stream is compressed whole before it is sent, to declare its length. */
const MAX_GZIP_BYTES = 64 * 1024 * 1024;

function isStatus(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 999;
}

function stringRecord(record: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, String(value)]));
}

export class FaultQueue {
  private faults: QueuedFault[] = [];
  private nextId = 1;

  add(spec: FaultSpec): number {
    const id = this.nextId++;
    this.faults.push({ id, spec, regex: new RegExp(spec.path), remaining: spec.times });
    return id;
  }

  /** Take one use of the first HTTP fault matching the request (FIFO). */
  takeHttp(method: string, path: string): FaultSpec | undefined {
    return this.take(method, path, false);
  }

  /** Take one use of the first taskExitStatus fault matching a create request. */
  takeTaskExitStatus(method: string, path: string): string | undefined {
    return this.take(method, path, true)?.taskExitStatus;
  }

  list(): { id: number; remaining: number; spec: FaultSpec }[] {
    return this.faults.map(({ id, remaining, spec }) => ({ id, remaining, spec }));
  }

  clear(): void {
    this.faults = [];
  }

  private take(method: string, path: string, task: boolean): FaultSpec | undefined {
    const fault = this.faults.find(
      (f) =>
        (f.spec.taskExitStatus !== undefined) === task &&
        (f.spec.method === undefined || f.spec.method.toUpperCase() === method) &&
        f.regex.test(path),
    );
    if (!fault) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults = this.faults.filter((f) => f !== fault);
    return fault.spec;
  }
}

/** The reply a fault produces, or 'pass' to continue normally (after its delay, if any). */
export function faultReply(spec: FaultSpec): Reply | 'pass' {
  if (spec.drop) return { kind: 'drop', delayMs: spec.delayMs ?? 0 };
  // With a stream, `hang` stalls it after its first piece; without one, nothing is answered.
  if (spec.hang && spec.streamBytes === undefined) return { kind: 'hang' };
  if (spec.streamBytes !== undefined) {
    return {
      kind: 'stream',
      status: spec.status ?? 200,
      bytes: spec.streamBytes,
      chunked: spec.chunked !== false,
      gzip: spec.gzip === true,
      stall: spec.hang === true,
      headers: spec.headers ?? {},
      delayMs: spec.delayMs ?? 0,
    };
  }
  const responds =
    spec.status !== undefined || spec.body !== undefined || spec.reason !== undefined;
  if (!responds && spec.contentType === undefined && spec.headers === undefined) return 'pass';
  const isText = typeof spec.body === 'string' || spec.body === undefined;
  const body = isText ? ((spec.body as string | undefined) ?? '') : JSON.stringify(spec.body);
  const defaultType = isText ? 'text/plain; charset=UTF-8' : 'application/json;charset=UTF-8';
  const contentType = spec.contentType ?? defaultType;
  const typeHeader: Record<string, string> =
    body !== '' || spec.contentType ? { 'Content-Type': contentType } : {};
  return {
    kind: 'http',
    status: spec.status ?? 500,
    ...(spec.reason !== undefined ? { reason: spec.reason } : {}),
    headers: { ...typeHeader, ...(spec.headers ?? {}) },
    body,
    delayMs: spec.delayMs ?? 0,
  };
}
