// A small client for tests: PVE API calls with the simulator's tokens, the control API, and raw
// HTTP requests (for framing a fetch() cannot produce, e.g. a chunked body or a GET with a body).
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { SIMULATOR_TOKENS } from '../access/tokens.ts';
import type { FaultSpec } from './faults.ts';
import type { LoggedRequest } from '../http/request-log.ts';
import type { GuestView } from './guest-view.ts';
import type { SeedName } from '../cluster/seed.ts';

/** A form or query value; an array is sent as the key repeated (how PVE takes array parameters). */
export type FormField = string | number | readonly (string | number)[];

export interface ApiOptions {
  /** Form fields, encoded with URLSearchParams, or a raw form string sent as is. */
  readonly form?: Record<string, FormField> | string;
  readonly json?: unknown;
  readonly query?: Record<string, FormField>;
  /** Token to send; null sends no Authorization header. Defaults to the admin token. */
  readonly token?: { readonly id: string; readonly secret: string } | null;
  readonly headers?: Record<string, string>;
}

export interface SimResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body (throws if it is not JSON). */
  readonly body: {
    data?: unknown;
    message?: string;
    errors?: Record<string, string>;
    total?: number;
  };
}

export type FaultInput = Partial<FaultSpec> & { readonly path: string };

function searchParams(record: Record<string, FormField>): URLSearchParams {
  const pairs = Object.entries(record).flatMap(([key, value]): [string, string][] =>
    Array.isArray(value) ? value.map((item) => [key, String(item)]) : [[key, String(value)]],
  );
  return new URLSearchParams(pairs);
}

async function toSimResponse(res: Response): Promise<SimResponse> {
  const text = await res.text();
  return {
    status: res.status,
    reason: res.statusText,
    headers: res.headers,
    text,
    get body() {
      return JSON.parse(text) as SimResponse['body'];
    },
  };
}

export function createSimClient(baseUrl: string, tenant?: string) {
  const root = tenant ? `${baseUrl}/t/${tenant}` : baseUrl;
  const control = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'Content-Type': 'application/json' };
    }
    const res = await fetch(`${root}/_sim${path}`, init);
    const parsed: unknown = await res.json();
    if (!res.ok)
      throw new Error(`control ${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  return {
    root,
    async api(method: string, path: string, options: ApiOptions = {}): Promise<SimResponse> {
      const token = options.token === undefined ? SIMULATOR_TOKENS.admin : options.token;
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      if (token) headers.Authorization = `PVEAPIToken=${token.id}=${token.secret}`;
      let body: string | undefined;
      if (options.json !== undefined) {
        body = JSON.stringify(options.json);
        headers['Content-Type'] ??= 'application/json';
      } else if (options.form !== undefined) {
        const form = options.form;
        body = typeof form === 'string' ? form : searchParams(form).toString();
        headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
      }
      const query = options.query ? `?${searchParams(options.query)}` : '';
      const init: RequestInit = { method, headers, redirect: 'manual' };
      if (body !== undefined) init.body = body;
      const res = await fetch(`${root}/api2/json${path}${query}`, init);
      return toSimResponse(res);
    },
    requests: async () =>
      ((await control('GET', '/requests')) as { requests: LoggedRequest[] }).requests,
    clearRequests: () => control('DELETE', '/requests'),
    /** Back to the seeded cluster; `seed` seeds another one (cluster/seed.ts) from now on. */
    reset: (seed?: SeedName) => control('POST', '/reset', seed ? { seed } : undefined),
    fault: (spec: FaultInput) => control('POST', '/faults', spec),
    configure: (config: {
      authFailDelayMs?: number;
      taskDurationMs?: number;
      strictBridges?: boolean;
    }) => control('POST', '/config', config),
    setNodeOnline: (node: string, online: boolean) =>
      control('POST', `/nodes/${node}/${online ? 'online' : 'offline'}`),
    /** A guest as the control API shows it (config, pending, snapshots, run state), or throws. */
    guest: async (vmid: number) => (await control('GET', `/guests/${vmid}`)) as GuestView,
    setLock: (vmid: number, lock: string | null) =>
      lock === null
        ? control('DELETE', `/guests/${vmid}/lock`)
        : control('POST', `/guests/${vmid}/lock`, { lock }),
    setAgent: (vmid: number, running: boolean) =>
      control('POST', `/guests/${vmid}/agent`, { running }),
    setQmpStatus: (vmid: number, qmpstatus: string) =>
      control('POST', `/guests/${vmid}/qmpstatus`, { qmpstatus }),
  };
}

export interface RawRequestOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly chunked?: boolean;
  readonly timeoutMs?: number;
}

export interface RawResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A request with exact framing. With `chunked: true` no Content-Length is set, so Node sends the
 * body with Transfer-Encoding: chunked. Rejects if the server drops the connection.
 */
export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...(options.headers ?? {}) };
    if (options.body !== undefined && !options.chunked) {
      headers['Content-Length'] = String(Buffer.byteLength(options.body));
    }
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            reason: res.statusMessage ?? '',
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.timeoutMs !== undefined) {
      req.setTimeout(options.timeoutMs, () => req.destroy(new Error('timeout')));
    }
    if (options.body !== undefined) {
      // Two writes make Node frame the body as chunks when no Content-Length is set.
      const half = Math.floor(options.body.length / 2);
      req.write(options.body.slice(0, half));
      req.write(options.body.slice(half));
    }
    req.end();
  });
}

export function adminAuthHeader(): string {
  return `PVEAPIToken=${SIMULATOR_TOKENS.admin.id}=${SIMULATOR_TOKENS.admin.secret}`;
}
