// What can go wrong between us and pveproxy, as one tagged error, and the one place that turns
// it into words an agent (and the operator reading over its shoulder) can act on.
// Messages carry PVE's own text and the failing field, never a header, token or secret.

import { type Held, lackingEverywhere } from './refusal';

export type PveFailure =
  | { kind: 'invalid_parameters'; status: 400; message: string; params: Record<string, string> }
  | { kind: 'auth_failed'; status: 401; reason: string }
  | {
      kind: 'forbidden';
      status: 403;
      message: string;
      /** Where PVE's text names them: the path, and the privilege (`A|B`: any one of them). */
      path?: string;
      privilege?: string;
      /** Where it names none: what the token holds on the paths the request is about. */
      held?: Held[];
      /** A privilege such a request needs on any one of those paths (see ./refusal.ts). */
      needs?: string;
    }
  | { kind: 'server_error'; status: 500; message: string }
  | { kind: 'not_implemented'; status: 501; message: string }
  | { kind: 'node_unreachable'; status: number; message: string; node?: string }
  | { kind: 'access_denied'; status: number; location?: string; inferred?: boolean }
  | { kind: 'tunnel_error'; status: number; code?: string }
  | { kind: 'redirect'; status: number; location?: string }
  | { kind: 'not_json'; status: number; contentType: string }
  | { kind: 'bad_response'; status: number; problem: string }
  /** A body over the client's cap (declared, or counted while streaming); not read further. */
  | { kind: 'too_large'; status: number; limitBytes: number; declaredBytes?: number }
  | { kind: 'http_error'; status: number; message: string }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'network'; cause: string };

/** How messages name a cluster's settings: the single-cluster ones, or one of PVE_CLUSTERS'. */
export interface SettingNames {
  /** Whose token a refusal is about (a person's, with PVE_IDENTITIES); absent: the server's. */
  token?: string;
  baseUrl: string;
  tokenId: string;
  tokenSecret: string;
  accessId: string;
  accessSecret: string;
}

export const SINGLE_CLUSTER_NAMES: SettingNames = {
  baseUrl: 'PVE_BASE_URL',
  tokenId: 'PVE_TOKEN_ID (user@realm!tokenid)',
  tokenSecret: 'PVE_TOKEN_SECRET',
  accessId: 'CF_ACCESS_CLIENT_ID',
  accessSecret: 'CF_ACCESS_CLIENT_SECRET',
};

export class PveError extends Error {
  override readonly name = 'PveError';
  constructor(
    readonly failure: PveFailure,
    readonly method: string,
    readonly path: string,
    names: SettingNames = SINGLE_CLUSTER_NAMES,
  ) {
    super(describePveFailure(failure, method, path, names));
  }

  get status(): number | undefined {
    return 'status' in this.failure ? this.failure.status : undefined;
  }
}

export function describePveFailure(
  f: PveFailure,
  method: string,
  path: string,
  n: SettingNames = SINGLE_CLUSTER_NAMES,
): string {
  const where = `${method} ${path}`;
  switch (f.kind) {
    case 'invalid_parameters': {
      const fields = Object.entries(f.params).map(([k, v]) => `${k}: ${v}`);
      return `Proxmox rejected the parameters (400 ${f.message})${fields.length ? ` — ${fields.join('; ')}` : ''}`;
    }
    case 'auth_failed':
      return `Proxmox rejected the API token (401 ${f.reason}). Check ${n.tokenId} and ${n.tokenSecret}, and that the token is not expired or deleted.`;
    case 'forbidden':
      return refusal(f, where, n);
    case 'server_error':
      return `Proxmox reported an error (500): ${f.message}`;
    case 'not_implemented':
      return /chunked/i.test(f.message)
        ? `Proxmox refused a chunked request body (501 ${f.message}). If a Cloudflare Tunnel sits in front of pveproxy, set originRequest.disableChunkedEncoding: true in cloudflared.`
        : `Proxmox does not implement ${where} (501 ${f.message}).`;
    case 'node_unreachable':
      return `pveproxy could not reach ${f.node ? `node ${f.node}` : 'the target node'} (${f.status} ${f.message}). The node may be offline or partitioned from the cluster.`;
    case 'access_denied':
      if (f.inferred) {
        return `Something in front of pveproxy refused the request with a non-JSON ${f.status} (pveproxy's own refusals are JSON). Most likely it is Cloudflare Access, whose service-token refusal page says only "Forbidden": check that ${n.accessId} and ${n.accessSecret} are set to a valid service token and that the Access application has a Service Auth policy that includes it.`;
      }
      return `Cloudflare Access refused the request (${f.status}${f.location ? `, redirect to ${f.location}` : ''}). Check ${n.accessId} / ${n.accessSecret} and that the Access application has a Service Auth policy that includes this service token.`;
    case 'tunnel_error':
      return `Cloudflare could not reach pveproxy through the tunnel (${f.status}${f.code ? `, error ${f.code}` : ''}). Check that cloudflared is running and connected, and its ingress rule for this hostname.`;
    case 'redirect':
      return `Expected the Proxmox API but got a redirect (${f.status}${f.location ? ` to ${f.location}` : ''}). Check ${n.baseUrl} (scheme, host and /api2/json path).`;
    case 'not_json':
      return `Expected JSON from the Proxmox API but got ${f.contentType || 'no content type'} (status ${f.status}). Something other than pveproxy answered: check ${n.baseUrl}, the tunnel and any proxy in between.`;
    case 'bad_response':
      return `Proxmox answered ${where} with data of an unexpected shape: ${f.problem}`;
    case 'too_large':
      return `The answer to ${where} is ${f.declaredBytes !== undefined ? `${f.declaredBytes} bytes` : `larger than ${f.limitBytes} bytes`}, over the ${f.limitBytes / 1_048_576} MiB this server reads; it was not read. Narrow the request (a node, a filter, a smaller limit), or check that ${n.baseUrl} reaches pveproxy.`;
    case 'http_error':
      return `Proxmox answered ${where} with HTTP ${f.status}: ${f.message}`;
    case 'timeout':
      return `Proxmox did not answer ${where} within ${Math.round(f.timeoutMs / 1000)} s.`;
    case 'network':
      return `Could not connect to the Proxmox API for ${where}: ${f.cause}`;
  }
}

/**
 * Whether a failed write (POST, PUT, DELETE) may still have happened: only a JSON error from
 * pveproxy itself (or a refusal before the request could reach it) says for sure that it did not.
 */
export function writeMayHaveHappened(err: PveError): boolean {
  const f = err.failure;
  switch (f.kind) {
    case 'timeout':
    case 'network':
    case 'bad_response':
    case 'too_large':
    case 'http_error':
      return true;
    case 'tunnel_error':
      return f.status !== 530; // 530 (e.g. 1033): the tunnel is down, nothing reached pveproxy
    case 'not_json':
      return f.status >= 200 && f.status < 300;
    case 'node_unreachable':
      return f.status !== 595; // 595: pveproxy could not even connect to the node
    default:
      return false;
  }
}

/** Privileges named in a refusal before the rest are counted. */
const MAX_NAMED = 12;

/** A 403: the privilege the token lacks and where, as PVE names it or as read from Proxmox. */
function refusal(
  f: Extract<PveFailure, { kind: 'forbidden' }>,
  where: string,
  n: SettingNames,
): string {
  const who = n.token ? `Proxmox refused: ${n.token}` : 'The Proxmox API token';
  const grant = 'Grant it to the token (and, with privilege separation, to its user).';
  const status = `(403 ${f.message})`;
  if (f.privilege) {
    const any = f.privilege.split('|');
    const what = any.length > 1 ? `${any.join(' or ')} (any one would do)` : f.privilege;
    return `${who} lacks the privilege ${what} on ${f.path} ${status}. ${grant}`;
  }
  if (/\(user != root@pam\)$/.test(f.message))
    return `Proxmox lets only root@pam itself do ${where}, never an API token, whatever it holds ${status}.`;
  const held = f.held ?? [];
  if (lackingEverywhere(held, f.needs)) {
    const either = held.length > 1 ? ' (either would do)' : '';
    return `${who} lacks the privilege ${f.needs} on ${held.map((h) => h.path).join(' and on ')}${either} ${status}. ${grant}`;
  }
  if (held.some((h) => h.privileges !== null)) {
    const on = held.map((h) => `on ${h.path}, ${heldText(h.privileges)}`).join('; ');
    return `${who} may not ${where}, and Proxmox's refusal names no privilege ${status}. What the token holds, as Proxmox answers for it: ${on}.`;
  }
  return `Proxmox refused the request ${status}.`;
}

function heldText(privileges: readonly string[] | null): string {
  if (privileges === null) return 'unknown (not read)';
  if (!privileges.length) return 'nothing';
  const more = privileges.length - MAX_NAMED;
  return `${privileges.slice(0, MAX_NAMED).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}
