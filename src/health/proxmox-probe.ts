// Whether Proxmox answers, for /health: one cheap authenticated read (GET /version) through the
// same client and error classification the tools use, with a short timeout. The result is kept
// for PROBE_TTL_MS per isolate and per connection setting, so /health cannot be used to hammer
// pveproxy. Only settled results are kept: a promise shared across requests may not outlive the
// request that made it in workerd.

import type { Clock } from '../clock';
import { z } from 'zod';
import { PveClient, type PveClientConfig } from '../proxmox/client';
import {
  PveError,
  type PveFailure,
  type SettingNames,
  SINGLE_CLUSTER_NAMES,
} from '../proxmox/errors';

export const PROBE_TTL_MS = 10_000;
const PROBE_TIMEOUT_MS = 3_000;
const MAX_KEYS = 8;

/** What answered: `ok`, or which part of the way to pveproxy failed. */
export type ProbeStatus =
  | 'ok'
  | 'auth_failed'
  | 'forbidden'
  | 'access_denied'
  | 'tunnel_down'
  | 'not_pveproxy'
  | 'timeout'
  | 'unreachable'
  | 'error';

export interface ProxmoxProbe {
  status: ProbeStatus;
  ms: number;
  /** When the probe ran (epoch ms); older than now means a cached result. */
  at: number;
  /** PVE's version string, when it answered. */
  pveVersion?: string;
  /** The client's own description of the failure (operator eyes only: it may name hosts). */
  message?: string;
}

const versionData = z.object({ version: z.string() });
const cache = new Map<string, ProxmoxProbe>();

/** `cluster`: its name, where there are several (two VPC services share a base URL). */
export async function probeProxmox(
  config: PveClientConfig,
  clock: Clock,
  cluster = '',
): Promise<ProxmoxProbe> {
  const now = (): number => clock.now();
  // The secret is not part of the key: changing a secret redeploys, which starts new isolates.
  const key = `${cluster} ${config.binding ? 'binding' : 'url'} ${config.baseUrl} ${config.tokenId}`;
  const cached = cache.get(key);
  if (cached && now() - cached.at < PROBE_TTL_MS) return cached;
  const client = new PveClient(
    { ...config, timeoutMs: Math.min(config.timeoutMs, PROBE_TIMEOUT_MS) },
    clock,
  );
  const started = now();
  let result: ProxmoxProbe;
  try {
    const data = await client.get('/version', versionData);
    result = { status: 'ok', ms: now() - started, at: started, pveVersion: data.version };
  } catch (err) {
    const failure: PveFailure =
      err instanceof PveError ? err.failure : { kind: 'network', cause: 'unexpected error' };
    result = {
      status: statusOf(failure),
      ms: now() - started,
      at: started,
      message: err instanceof Error ? err.message : String(err),
    };
  }
  if (cache.size >= MAX_KEYS) cache.clear();
  cache.set(key, result);
  return result;
}

/** For tests: forget every kept result. */
export function forgetProbes(): void {
  cache.clear();
}

function statusOf(failure: PveFailure): ProbeStatus {
  switch (failure.kind) {
    case 'auth_failed':
      return 'auth_failed';
    case 'forbidden':
      return 'forbidden';
    case 'access_denied':
      return 'access_denied';
    case 'tunnel_error':
      return 'tunnel_down';
    case 'not_json':
    case 'redirect':
      return 'not_pveproxy';
    case 'timeout':
      return 'timeout';
    case 'network':
      return 'unreachable';
    case 'invalid_parameters':
    case 'server_error':
    case 'not_implemented':
    case 'node_unreachable':
    case 'bad_response':
    case 'too_large':
    case 'http_error':
      return 'error';
  }
}

/** What to do about a failed probe, naming the settings `s` of the cluster that failed. */
export function probeFix(
  status: Exclude<ProbeStatus, 'ok'>,
  s: SettingNames = SINGLE_CLUSTER_NAMES,
): string {
  switch (status) {
    case 'auth_failed':
      return `Check ${s.tokenId} and the secret (\`wrangler secret put ${s.tokenSecret}\`); the token must still exist on the cluster (\`pveum user token list <user>\`).`;
    case 'forbidden':
      return `Something refused GET /version with 403: if Cloudflare Access protects ${s.baseUrl}, its policy must be Service Auth and include the service token; otherwise check the token on the cluster.`;
    case 'access_denied':
      return `Check ${s.accessId} and \`wrangler secret put ${s.accessSecret}\`, and that the Access application for ${s.baseUrl} has a Service Auth policy including that service token.`;
    case 'tunnel_down':
      return 'Start cloudflared next to pveproxy (`systemctl status cloudflared`) and check its ingress rule for this hostname (service: https://localhost:8006).';
    case 'not_pveproxy':
      return `${s.baseUrl} reaches something other than pveproxy (an HTML page or a redirect): check its host and /api2/json path, and any proxy or Access application in front.`;
    case 'timeout':
      return 'pveproxy did not answer in time: check that it runs (`systemctl status pveproxy`), the tunnel or VPC service in between, and PVE_TIMEOUT_MS.';
    case 'unreachable':
      return `Nothing answered at ${s.baseUrl}: check host and port, that pveproxy (locally: the simulator, \`npm start\`) is running, the tunnel or VPC service, and that its TLS certificate is one the Worker trusts (docs/deploy.md: Certificates).`;
    case 'error':
      return 'pveproxy answered GET /version with an error: see the message, and the Proxmox logs (`journalctl -u pveproxy`).';
  }
}
