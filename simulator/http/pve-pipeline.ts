// One request through pveproxy's steps, in its order (pve-http-server AnyEvent.pm):
// method known? → chunked body refused → /api2 auth (401, delayed) → body length/type checks →
// formatter → parameter extraction → rest_handler. Everything before auth answers unauthenticated.
import type { IncomingHttpHeaders } from 'node:http';
import { runApiCall } from './rest-handler.ts';
import { authenticate } from './auth.ts';
import { settleTasks } from '../cluster/tasks.ts';
import { unescapePath } from './form-decode.ts';
import { emptyReply, textError, type Reply } from './http-reply.ts';
import { extractParams, parseContentType } from './request-params.ts';
import type { Tenant } from '../tenant.ts';

export interface IncomingFacts {
  readonly method: string;
  /** Request path as sent (percent-encoded), without the tenant prefix and query. */
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);
const MAX_POST = 512 * 1024;
const ACCEPTED_TYPES = new Set(['application/x-www-form-urlencoded', 'application/json']);

export function handlePveRequest(tenant: Tenant, req: IncomingFacts, now: number): Reply {
  settleTasks(tenant.state, now);
  const { method, headers } = req;
  if (!KNOWN_METHODS.has(method)) return emptyReply(501, `method '${method}' not available`);
  const te = headers['transfer-encoding'];
  if (te !== undefined) {
    return te.toLowerCase() === 'chunked'
      ? textError(501, 'chunked transfer encoding not supported')
      : textError(501, `Unknown transfer encoding '${te}'`);
  }
  const path = unescapePath(req.path);
  const isApi = path.startsWith('/api2');
  const abs = /^\/api2\/+([a-z][a-z0-9]+)(\/.*)?$/.exec(path);
  let identity;
  if (isApi) {
    if (!abs) return textError(501, 'no such uri');
    const auth = authenticate(headers);
    if (!auth.ok) return emptyReply(401, auth.reason, tenant.config.authFailDelayMs);
    // A guest's pool, as this tenant's cluster has it now (pool ACLs reach its guests).
    identity = { ...auth.identity, poolOf: (vmid: number) => tenant.state.guests.get(vmid)?.pool };
  }
  // pveproxy tests `if ($len)`, so an explicit "Content-Length: 0" counts as no body.
  const length = Number(headers['content-length'] ?? 0);
  if (length) {
    if (method !== 'POST' && method !== 'PUT') {
      return textError(501, `Unexpected content for method '${method}'`);
    }
    if (length > MAX_POST) return textError(501, 'for data too large');
    const ctype = headers['content-type'];
    if (ctype !== undefined && ctype !== '' && !ACCEPTED_TYPES.has(parseContentType(ctype))) {
      return textError(506, `upload 'Content-Type '${ctype}' not implemented`);
    }
  }
  if (!abs || identity === undefined) return textError(500, `no such file '${path}'\n`);
  const [, format, relPath = '/'] = abs;
  if (format !== 'json') return textError(501, `no formatter for uri ${relPath}, ${format}`);
  let params;
  try {
    params = extractParams(method, headers, req.body, req.rawQuery);
  } catch (err) {
    return textError(500, err instanceof Error ? err.message : String(err));
  }
  return runApiCall({
    method,
    relPath,
    params,
    state: tenant.state,
    identity,
    now,
    taskDurationMs: tenant.config.taskDurationMs,
    strictBridges: tenant.config.strictBridges,
    takeTaskExitStatus: () => tenant.faults.takeTaskExitStatus(method, relPath),
  });
}
