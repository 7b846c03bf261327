// Parsing the Proxmox connection and the simple switches out of the environment, each into a
// typed value or a problem saying what to fix. Pure; never echoes a secret.

import type { AppEnv } from '../env';
import { intSetting } from '../core/settings';
export { auditEnabled, auditLimits } from '../audit/limits';
import { isLoopbackHostname } from '../net/loopback-guard';
import type { PveClientConfig } from '../proxmox/client';

export type AuthMode = 'none' | 'oauth';

/** Every secret the Worker is configured with: what the scrubber (../secrets/scrub.ts) removes. */
export function configuredSecrets(env: AppEnv): string[] {
  return [
    env.PVE_TOKEN_SECRET,
    env.CF_ACCESS_CLIENT_SECRET,
    env.OIDC_CLIENT_SECRET,
    env.GITHUB_CLIENT_SECRET,
  ].filter((s): s is string => typeof s === 'string' && s.trim() !== '');
}

/** How long an out-of-band approval can be given and used: minutes, default 15, at most a day. */
export function approvalTtlMs(
  env: Pick<AppEnv, 'APPROVAL_TTL_MINUTES'>,
  problems: string[] = [],
): number {
  return (
    intSetting(env.APPROVAL_TTL_MINUTES, 'APPROVAL_TTL_MINUTES', 15, 1, 1_440, problems) * 60_000
  );
}

/** CORS_ORIGINS: exact origins (scheme://host[:port]); anything else is dropped, with a problem. */
export function corsOrigins(list: string[], problems: string[] = []): string[] {
  const origins: string[] = [];
  for (const entry of list) {
    const text = entry.replace(/\/+$/, '');
    let origin: string | null = null;
    try {
      origin = new URL(text).origin;
    } catch {
      // not a URL
    }
    if (origin !== null && origin !== 'null' && origin === text) origins.push(origin);
    else
      problems.push(
        `CORS_ORIGINS entry ${JSON.stringify(entry.slice(0, 60))} is not an origin like https://app.example.com; ignored`,
      );
  }
  return origins;
}

export function authMode(env: AppEnv): AuthMode | { error: string } {
  const mode = (env.AUTH_MODE ?? '').trim() || 'oauth';
  if (mode === 'none' || mode === 'oauth') return mode;
  return { error: `AUTH_MODE must be "none" or "oauth", got ${JSON.stringify(mode.slice(0, 20))}` };
}

const TOKEN_ID_RE = /^[^\s:@!=]+@[A-Za-z][A-Za-z0-9.\-_]*![A-Za-z][A-Za-z0-9.\-_]*$/;
const DEFAULT_TIMEOUT_MS = 15_000;

/** What one cluster's client is built from, and the names its messages give each setting. */
export interface ClientSettings {
  names: Record<
    'baseUrl' | 'tokenId' | 'tokenSecret' | 'accessId' | 'accessSecret' | 'binding',
    string
  >;
  baseUrl: string | undefined;
  tokenId: string | undefined;
  tokenSecret: string | undefined;
  accessId: string | undefined;
  accessSecret: string | undefined;
  binding: PveClientConfig['binding'];
  timeoutMs: string | undefined;
  /** Secrets whose absence is already reported (a variable named, but not set). */
  reported?: ReadonlySet<'tokenSecret' | 'accessSecret'>;
}

/** Builds a Proxmox client's settings, or says what is missing; never echoes a secret. */
export function clientConfig(s: ClientSettings): PveClientConfig | { error: string } {
  const { names } = s;
  const problems: string[] = [];
  const tokenId = s.tokenId?.trim() ?? '';
  const tokenSecret = s.tokenSecret?.trim() ?? '';
  if (!TOKEN_ID_RE.test(tokenId))
    problems.push(`${names.tokenId} must look like user@realm!tokenid`);
  if (!tokenSecret) {
    if (!s.reported?.has('tokenSecret')) problems.push(`${names.tokenSecret} is not set`);
  } else if (/[\s=]/.test(tokenSecret))
    problems.push(`${names.tokenSecret} contains spaces or "="`);

  const baseUrl = normaliseBaseUrl(s.baseUrl, s.binding !== undefined, names);
  if (typeof baseUrl !== 'string') problems.push(baseUrl.error);

  const timeout = s.timeoutMs ? Number(s.timeoutMs) : DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout < 100 || timeout > 120_000) {
    problems.push('PVE_TIMEOUT_MS must be an integer between 100 and 120000');
  }
  const accessId = s.accessId?.trim() || undefined;
  const accessSecret = s.accessSecret?.trim() || undefined;
  if (Boolean(accessId) !== Boolean(accessSecret) && !s.reported?.has('accessSecret')) {
    problems.push(`set both ${names.accessId} and ${names.accessSecret}, or neither`);
  }
  if (problems.length || typeof baseUrl !== 'string' || !tokenSecret)
    return { error: problems.join('; ') };
  return {
    baseUrl,
    tokenId,
    tokenSecret,
    accessClientId: accessId,
    accessClientSecret: accessSecret,
    binding: s.binding,
    timeoutMs: timeout,
  };
}

/** Accepts an origin or a URL ending in /api2/json; a service binding needs no host of its own. */
function normaliseBaseUrl(
  raw: string | undefined,
  hasBinding: boolean,
  names: ClientSettings['names'],
): string | { error: string } {
  const setting = names.baseUrl;
  const text = raw?.trim() ?? '';
  if (!text) {
    // A VPC service to pveproxy serves https (pveproxy has no plain http).
    return hasBinding ? 'https://pve/api2/json' : { error: `${setting} is not set` };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: `${setting} is not a URL` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { error: `${setting} must be http(s)` };
  // The API token travels in every request: over the network it must be encrypted. Plain http
  // is for a Proxmox (or the simulator) on this machine, or a service binding (the Worker's
  // fetch then never leaves Cloudflare; the tunnel carries the request to pveproxy over TLS).
  if (url.protocol === 'http:' && !hasBinding && !isLoopbackHostname(url.hostname)) {
    return {
      error: `${setting} must use https: (plain http is only allowed for a loopback address or through the ${names.binding}), got http://${url.host}: the API token would cross the network unencrypted`,
    };
  }
  if (url.username || url.password || url.search || url.hash) {
    return { error: `${setting} must not contain credentials, a query or a fragment` };
  }
  const path = url.pathname.replace(/\/+$/, '');
  const withApi = path.endsWith('/api2/json') ? path : `${path}/api2/json`;
  return `${url.origin}${withApi}`;
}
