// The API behind /api2/json, as pve-manager's rest_handler runs it: find the handler (else 501),
// refuse body parameters that contradict the URI, check the method's permissions, "proxy" to the
// node named in the path (unknown node → 500 hostname lookup, offline node → 595), then validate
// parameters and call the handler.
import { ApiError, paramError } from '../schema/pve-error.ts';
import { findNode } from '../cluster/cluster-state.ts';
import { checkApiPermissions } from '../access/permissions.ts';
import type { HandlerContext } from '../api/handler-context.ts';
import { ROUTES } from '../api/routes.ts';
import { ResultWithTotal } from '../api/tasks.ts';
import { apiErrorReply, emptyReply, jsonReply, type Reply } from './http-reply.ts';
import { normalizeLegacyParams, validateParams } from '../schema/schema-check.ts';
import type { Params } from '../schema/schema-types.ts';

/** Routes compiled once: segments, with `{name}` capturing one path segment. */
const COMPILED = ROUTES.map((route) => ({
  route,
  segments: route.path.split('/').filter(Boolean),
}));

type RouteMatch = { route: (typeof ROUTES)[number]; uriParams: Record<string, string> };

/**
 * Subclasses registered with `fragmentDelimiter => ''` (pve-storage Status.pm: storage content,
 * because volume IDs may contain '/'): below them, the rest of the path is one component.
 */
const WHOLE_REST_BELOW = [['nodes', '{node}', 'storage', '{storage}', 'content']];

function joinFragments(parts: string[]): string[] {
  for (const prefix of WHOLE_REST_BELOW) {
    const under = prefix.every((segment, i) => segment.startsWith('{') || parts[i] === segment);
    if (under && parts.length > prefix.length + 1) {
      return [...parts.slice(0, prefix.length), parts.slice(prefix.length).join('/')];
    }
  }
  return parts;
}

function findRoute(method: string, relPath: string): RouteMatch | undefined {
  // RESTHandler::find_handler ignores empty segments, so '/nodes//pve1/qemu/' matches too.
  const parts = joinFragments(relPath.split('/').filter(Boolean));
  for (const { route, segments } of COMPILED) {
    if (route.method !== method || segments.length !== parts.length) continue;
    const uriParams: Record<string, string> = {};
    const matches = segments.every((segment, i) => {
      const part = parts[i] ?? '';
      const name = /^\{(.+)\}$/.exec(segment)?.[1];
      if (name === undefined) return segment === part;
      uriParams[name] = part;
      return true;
    });
    if (matches) return { route, uriParams };
  }
  return undefined;
}

export type ApiCall = Omit<HandlerContext, 'params'> & {
  readonly method: string;
  readonly relPath: string;
  readonly params: Params;
};

function handle(call: ApiCall): Reply {
  const found = findRoute(call.method, call.relPath);
  if (!found) {
    return jsonReply(501, null, `Method '${call.method} ${call.relPath}' not implemented`);
  }
  let params: Params = { ...call.params };
  for (const key of Object.keys(params).sort()) {
    if (!Object.hasOwn(found.uriParams, key)) continue;
    if (String(params[key] ?? '') !== found.uriParams[key]) {
      throw paramError({
        [key]: 'duplicate parameter (already defined in URI) with conflicting values!',
      });
    }
  }
  Object.assign(params, found.uriParams);
  checkApiPermissions(call.identity, found.route.permissions, params);
  const nodeName = found.uriParams.node;
  if (nodeName !== undefined) {
    const node = findNode(call.state, nodeName);
    if (!node) {
      const lookup = `failed to get address info for: ${nodeName}: Name or service not known`;
      throw new ApiError(500, `hostname lookup '${nodeName}' failed - ${lookup}\n`);
    }
    // pveproxy could not connect to the node: AnyEvent::HTTP's 595 with the errno text, no body.
    if (!node.online) return emptyReply(595, 'No route to host');
  }
  params = normalizeLegacyParams(found.route.schema, params);
  const errors = validateParams(found.route.schema, params);
  if (Object.keys(errors).length > 0) throw paramError(errors);
  const data = found.route.handle({ ...call, params });
  if (data instanceof ResultWithTotal)
    return jsonReply(200, data.data, undefined, undefined, data.total);
  return jsonReply(200, data);
}

/** Run one API call; handler errors become PVE's JSON error replies. */
export function runApiCall(call: ApiCall): Reply {
  try {
    return handle(call);
  } catch (err) {
    if (err instanceof ApiError) return apiErrorReply(err);
    const message = err instanceof Error ? err.message : String(err);
    return apiErrorReply(new ApiError(500, `${message}\n`));
  }
}
