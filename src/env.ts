// The configuration contract: every binding and variable the Worker reads (each works with
// `wrangler dev --var NAME:VALUE`). ./config/ parses them, once, into a checked configuration.

import type { Approvals } from './approvals/approvals-store';
import type { ProxmoxMcp } from './mcp/legacy/agent';
import type { AuditLog } from './audit/audit-log';
import type { PolicyCounters } from './counters/policy-counters';

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
