// The Proxmox VE API simulator's entry module: a plain HTTP/1.1 server that answers like pveproxy
// (pve-api-daemon/3.0) for the endpoints the MCP server uses, plus a control API for tests.
// Routes: [/t/<tenant>]/api2/json/... (PVE API) and [/t/<tenant>]/_sim/... (control).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { handleControl } from './control/control-api.ts';
import { faultReply } from './control/faults.ts';
import { unescapePath, decodeUrlencoded } from './http/form-decode.ts';
import { writeReply, writeStream, type Reply } from './http/http-reply.ts';
import { handlePveRequest, type IncomingFacts } from './http/pve-pipeline.ts';
import { bodyParams } from './http/request-params.ts';
import type { SeedName } from './cluster/seed.ts';
import { DEFAULT_TENANT, TENANT_NAME_RE, TenantRegistry } from './tenant.ts';

export { SIMULATOR_TOKENS } from './access/tokens.ts';
export { SEED_SUMMARY, SEEDS, type SeedName } from './cluster/seed.ts';

export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** Delay of every 401, like pveproxy's ~3 s. Default 3000. */
  authFailDelayMs?: number;
  /** How long every worker task (qmcreate, qmstart, vzmigrate, ...) stays 'running'. Default 1500. */
  taskDurationMs?: number;
  /** The seed of each tenant named here (`''` is the default one); the others start full. */
  seeds?: Readonly<Record<string, SeedName>>;
}

export interface RunningSimulator {
  /** http://HOST:PORT, no trailing slash. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Bodies are kept up to this size (pveproxy refuses POSTs over 512 KiB anyway). */
const MAX_KEPT_BODY = 2 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    req.on('data', (chunk: Buffer) => {
      if (kept < MAX_KEPT_BODY) chunks.push(chunk);
      kept += chunk.length;
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

/** Split a request target into tenant, path and query (request targets are latin1 byte strings). */
function splitTarget(url: string): { tenant: string; path: string; rawQuery: string } {
  const target = url.replace(/^[a-z]+:\/\/[^/]*/i, '').split('#')[0] ?? '';
  const queryAt = target.indexOf('?');
  const fullPath = queryAt < 0 ? target : target.slice(0, queryAt);
  const rawQuery = queryAt < 0 ? '' : target.slice(queryAt + 1);
  const prefixed = /^\/t\/([^/]+)(\/.*)?$/.exec(fullPath);
  if (prefixed && TENANT_NAME_RE.test(prefixed[1] ?? '')) {
    return { tenant: prefixed[1] ?? DEFAULT_TENANT, path: prefixed[2] ?? '/', rawQuery };
  }
  return { tenant: DEFAULT_TENANT, path: fullPath || '/', rawQuery };
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Faults match the decoded path below /api2/json (other paths as they are). */
function faultPath(rawPath: string): string {
  const path = unescapePath(rawPath);
  return path.replace(/^\/api2\/+json(?=\/|$)/, '') || '/';
}

export function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const host = options.host ?? '127.0.0.1';
  const tenants = new TenantRegistry(
    {
      authFailDelayMs: options.authFailDelayMs ?? 3000,
      taskDurationMs: options.taskDurationMs ?? 1500,
      strictBridges: false,
    },
    options.seeds,
  );
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const wait = (ms: number) =>
    new Promise<void>((resolve) => (ms > 0 ? later(ms, resolve) : resolve()));

  /** Send a reply after its delay; `onSent` gets the status, or null for a drop (never for hangs). */
  type OnSent = (status: number | null) => void;
  type OnStreamed = (streamed: { bytes: number; complete: boolean }) => void;
  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    reply: Reply,
    onSent: OnSent,
    onStreamed?: OnStreamed,
  ) => {
    if (reply.kind === 'hang') return; // keep the socket open and never answer
    later(reply.delayMs ?? 0, () => {
      if (reply.kind === 'drop') {
        req.socket.destroy();
        onSent(null);
      } else if (!res.destroyed && !res.headersSent) {
        try {
          if (reply.kind === 'stream')
            writeStream(res, reply, (bytes, complete) => onStreamed?.({ bytes, complete }));
          else writeReply(res, reply);
          onSent(reply.status);
        } catch (err) {
          // e.g. a fault with a header Node refuses to send: report it instead of crashing.
          const message = `simulator could not send the reply: ${errorText(err)}\n`;
          if (res.headersSent) req.socket.destroy();
          else writeReply(res, { kind: 'http', status: 500, body: message });
          onSent(res.headersSent ? 500 : null);
        }
      }
    });
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const { tenant: tenantName, path, rawQuery } = splitTarget(req.url ?? '/');
    const body = await readBody(req);
    const now = Date.now();
    const tenant = tenants.get(tenantName, now);
    if (path === '/_sim' || path.startsWith('/_sim/')) {
      const reply = handleControl(tenant, method, path.slice('/_sim'.length) || '/', body, now);
      res.writeHead(reply.status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(reply.body));
      return;
    }
    const entry = tenant.log.record(
      {
        method,
        rawPath: path,
        query: decodeUrlencoded(rawQuery),
        headers: req.headers,
        body,
        params: bodyParams(req.headers, body),
        chunked: /chunked/i.test(req.headers['transfer-encoding'] ?? ''),
      },
      now,
    );
    const record = (status: number | null) => {
      entry.status = status;
    };
    const fault = tenant.faults.takeHttp(method, faultPath(path));
    if (fault) {
      const injected = faultReply(fault);
      if (injected !== 'pass')
        return send(req, res, injected, record, (streamed) => (entry.streamed = streamed));
      await wait(fault.delayMs ?? 0);
    }
    const facts: IncomingFacts = { method, path, rawQuery, headers: req.headers, body };
    send(req, res, handlePveRequest(tenant, facts, Date.now()), record);
  };

  const server = createServer((req, res) => {
    res.on('error', () => {});
    onRequest(req, res).catch((err: unknown) => {
      // Never crash on bad input: answer 500 with the error text, as pveproxy's eval would.
      if (res.headersSent || res.destroyed) return;
      writeReply(res, { kind: 'http', status: 500, body: `${errorText(err)}\n` });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  // Node closes an idle keep-alive connection after 5 s, while a client (workerd's pool) may be
  // sending its next request on it: that request is lost, seen as "stream disconnected
  // prematurely" or as no answer until the Worker's deadline ("did not answer within 2 s"), most
  // often on a busy machine where a request leaves late. So the simulator never closes an idle
  // connection (0: no keep-alive timeout): the client, which knows when it sends, closes it, and
  // stop() ends what is left.
  server.keepAliveTimeout = 0;

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const urlHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${urlHost}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            for (const timer of timers) clearTimeout(timer);
            timers.clear();
            server.close(() => done());
            for (const socket of sockets) socket.destroy();
          }),
      });
    });
  });
}
