// The configuration contract: every binding and variable the Worker reads, and how they turn
// into a checked configuration. Each variable works with `wrangler dev --var NAME:VALUE`.

import type { Approvals } from './approvals/approvals-store';
import type { ProxmoxMcp } from './mcp/legacy/agent';
import type { AuditLog } from './audit/audit-log';
import type { PolicyCounters } from './counters/policy-counters';
import { isLoopbackHostname } from './guard';
import type { PveClientConfig } from './proxmox/client';

export interface AppEnv {
  /** One object per 2025 MCP session (McpAgent). */
  MCP_OBJECT: DurableObjectNamespace<ProxmoxMcp>;
  /** Rate-limit counters of the grant, user and global scopes (one object per scope key). */
  POLICY_COUNTERS: DurableObjectNamespace<PolicyCounters>;
  /** Pending and decided human approvals (one object). */
  APPROVALS: DurableObjectNamespace<Approvals>;
  /** The audit trail (one object for records, one for the count of lost records). */
  AUDIT: DurableObjectNamespace<AuditLog>;
  /** How long an out-of-band approval can be given and used, in minutes (default 15). */
  APPROVAL_TTL_MINUTES?: string;
  /** `false` turns the audit trail off (for measurements; /health and /admin say so). Default on. */
  AUDIT_ENABLED?: string;
  /** Audit retention in days (default 90) and row cap (default 1,000,000). */
  AUDIT_RETENTION_DAYS?: string;
  AUDIT_MAX_ROWS?: string;
  /** Who may open /admin (and approve any call without named approvers). */
  ADMIN_USERS?: string;
  ADMIN_GROUPS?: string;
  /** Optional service binding to pveproxy (Workers VPC service over Cloudflare Tunnel). */
  PVE?: Fetcher;
  /** e.g. https://pve.example.com:8006 or https://pve.example.com/api2/json */
  PVE_BASE_URL?: string;
  /** user@realm!tokenid */
  PVE_TOKEN_ID?: string;
  PVE_TOKEN_SECRET?: string;
  CF_ACCESS_CLIENT_ID?: string;
  CF_ACCESS_CLIENT_SECRET?: string;
  /** Per-request timeout towards Proxmox, in milliseconds (default 15000). */
  PVE_TIMEOUT_MS?: string;
  /** JSON text; overrides the bundled policy.json. */
  POLICY?: string;
  /** `none` (loopback only) or `oauth` (the default). */
  AUTH_MODE?: string;
  /** AUTH_MODE=none: browser origins (comma-separated) allowed to call from another origin. */
  CORS_ORIGINS?: string;
  /** OAuth library storage (clients, grants, tokens). */
  OAUTH_KV: KVNamespace;
  /** Public origin (resource and issuer); default: the request's own origin. */
  PUBLIC_URL?: string;
  /** Upstream identity provider: `dev` (local only), `oidc` or `github`. */
  IDP?: string;
  /** Comma-separated user ids, logins or emails admitted (`*`: anyone who can sign in). */
  ALLOWED_USERS?: string;
  /** Comma-separated groups admitted. */
  ALLOWED_GROUPS?: string;
  OIDC_ISSUER?: string;
  OIDC_CLIENT_ID?: string;
  OIDC_CLIENT_SECRET?: string;
  /** Space- or comma-separated; default `openid email profile`. */
  OIDC_SCOPES?: string;
  /** Claim holding the groups (dotted path allowed); default `groups`. */
  OIDC_GROUPS_CLAIM?: string;
  /** `true`: accept an email whose ID token says nothing of email_verified (IdPs that only send verified ones). */
  OIDC_TRUST_EMAIL?: string;
  GITHUB_CLIENT_ID?: string;
  GITHUB_CLIENT_SECRET?: string;
  /** Org whose membership and teams become groups. */
  GITHUB_ORG?: string;
  /** For GitHub Enterprise Server; defaults https://github.com and https://api.github.com. */
  GITHUB_URL?: string;
  GITHUB_API_URL?: string;
}

export type AuthMode = 'none' | 'oauth';

/** Every secret the Worker is configured with: what the scrubber (../secrets/scrub.ts) removes. */
export function configuredSecrets(env: AppEnv): string[] {
  return [env.PVE_TOKEN_SECRET, env.CF_ACCESS_CLIENT_SECRET, env.OIDC_CLIENT_SECRET, env.GITHUB_CLIENT_SECRET].filter(
    (s): s is string => typeof s === 'string' && s.trim() !== '',
  );
}

/** Auditing is on unless AUDIT_ENABLED is exactly "false". */
export function auditEnabled(env: AppEnv): boolean {
  return (env.AUDIT_ENABLED ?? '').trim().toLowerCase() !== 'false';
}

export function authMode(env: AppEnv): AuthMode | { error: string } {
  const mode = (env.AUTH_MODE ?? '').trim() || 'oauth';
  if (mode === 'none' || mode === 'oauth') return mode;
  return { error: `AUTH_MODE must be "none" or "oauth", got ${JSON.stringify(mode.slice(0, 20))}` };
}

const TOKEN_ID_RE = /^[^\s:@!=]+@[A-Za-z][A-Za-z0-9.\-_]*![A-Za-z][A-Za-z0-9.\-_]*$/;
const DEFAULT_TIMEOUT_MS = 15_000;

/** Builds the Proxmox client settings, or says what is missing; never echoes a secret. */
export function pveConfig(env: AppEnv): PveClientConfig | { error: string } {
  const problems: string[] = [];
  const tokenId = env.PVE_TOKEN_ID?.trim() ?? '';
  const tokenSecret = env.PVE_TOKEN_SECRET?.trim() ?? '';
  if (!TOKEN_ID_RE.test(tokenId)) problems.push('PVE_TOKEN_ID must look like user@realm!tokenid');
  if (!tokenSecret) problems.push('PVE_TOKEN_SECRET is not set');
  else if (/[\s=]/.test(tokenSecret)) problems.push('PVE_TOKEN_SECRET contains spaces or "="');

  const baseUrl = normaliseBaseUrl(env.PVE_BASE_URL, env.PVE !== undefined);
  if (typeof baseUrl !== 'string') problems.push(baseUrl.error);

  const timeout = env.PVE_TIMEOUT_MS ? Number(env.PVE_TIMEOUT_MS) : DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout < 100 || timeout > 120_000) {
    problems.push('PVE_TIMEOUT_MS must be an integer between 100 and 120000');
  }
  const accessId = env.CF_ACCESS_CLIENT_ID?.trim() || undefined;
  const accessSecret = env.CF_ACCESS_CLIENT_SECRET?.trim() || undefined;
  if (Boolean(accessId) !== Boolean(accessSecret)) {
    problems.push('set both CF_ACCESS_CLIENT_ID and CF_ACCESS_CLIENT_SECRET, or neither');
  }
  if (problems.length || typeof baseUrl !== 'string') return { error: problems.join('; ') };
  return {
    baseUrl,
    tokenId,
    tokenSecret,
    accessClientId: accessId,
    accessClientSecret: accessSecret,
    binding: env.PVE,
    timeoutMs: timeout,
  };
}

/** Accepts an origin or a URL ending in /api2/json; a service binding needs no host of its own. */
function normaliseBaseUrl(raw: string | undefined, hasBinding: boolean): string | { error: string } {
  const text = raw?.trim() ?? '';
  if (!text) {
    // A VPC service to pveproxy serves https (pveproxy has no plain http).
    return hasBinding ? 'https://pve/api2/json' : { error: 'PVE_BASE_URL is not set' };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: 'PVE_BASE_URL is not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { error: 'PVE_BASE_URL must be http(s)' };
  // The API token travels in every request: over the network it must be encrypted. Plain http
  // is for a Proxmox (or the simulator) on this machine, or a service binding (the Worker's
  // fetch then never leaves Cloudflare; the tunnel carries the request to pveproxy over TLS).
  if (url.protocol === 'http:' && !hasBinding && !isLoopbackHostname(url.hostname)) {
    return {
      error: `PVE_BASE_URL must use https: (plain http is only allowed for a loopback address or through the PVE service binding), got http://${url.host}: the API token would cross the network unencrypted`,
    };
  }
  if (url.username || url.password || url.search || url.hash) {
    return { error: 'PVE_BASE_URL must not contain credentials, a query or a fragment' };
  }
  const path = url.pathname.replace(/\/+$/, '');
  const withApi = path.endsWith('/api2/json') ? path : `${path}/api2/json`;
  return `${url.origin}${withApi}`;
}
