// The configuration contract: every binding and variable the Worker reads (each works with
// `wrangler dev --var NAME:VALUE`). ./config/ parses the variables, once, into a checked
// configuration; ./compose/ turns the bindings into the Runtime's ports. The Durable Object
// bindings are typed by what their objects answer: the small interface each class implements,
// written beside it in a module of types. This file imports types only, from modules that do not
// import it back (test/layers.node.test.ts holds every import circle out).

import type { ApprovalsObject } from './approvals/types';
import type { AuditObject } from './audit/record';
import type { CountersObject } from './counters/types';
import type { KeysObject } from './keys/names';
import type { NotifyMessage } from './notify/event-formats';
import type { PolicyStoreObject } from './policy-store/types';
import type { Bound } from './stores/stubs';

/**
 * One 2025 MCP session (McpAgent, mcp/legacy/agent.ts): whose it is, and its end on a
 * revocation. Written here, not beside its class: the MCP folder reads this module (its agent
 * is typed by AppEnv), so a module of types there would import back.
 */
export interface SessionObject {
  owner(): Promise<{ userId: string; grantId: string; scopes: readonly string[] } | null>;
  endSession(): Promise<void>;
}

export interface AppEnv {
  /** One object per 2025 MCP session (McpAgent). */
  MCP_OBJECT: Bound<SessionObject>;
  /** Rate-limit counters of the grant, user and global scopes (one object per scope key). */
  POLICY_COUNTERS: Bound<CountersObject>;
  /** Pending and decided human approvals (one object). */
  APPROVALS: Bound<ApprovalsObject>;
  /** The audit trail (one object for records, one for the count of lost records). */
  AUDIT: Bound<AuditObject>;
  /** The server's own keys: the argument HMAC's, the 2026 request state's (one object). */
  SERVER_KEYS: Bound<KeysObject>;
  /** The policy's versions and which one is active (one object). */
  POLICY_STORE: Bound<PolicyStoreObject>;
  /** One data point per call (../audit/call-point.ts), where the deployment binds a dataset. */
  CALL_METRICS?: AnalyticsEngineDataset;
  /** Approval events to announce (APPROVAL_WEBHOOKS), delivered by this Worker's queue consumer. */
  NOTIFY_QUEUE?: Queue<NotifyMessage>;
  /**
   * JSON list of receivers of approval events: `{name?, url, format?, secret?, events?,
   * private_network?}` (`private_network: true` lets one receiver be on a private network).
   */
  APPROVAL_WEBHOOKS?: string;
  /** One webhook delivery's deadline in milliseconds (default 5000). */
  APPROVAL_WEBHOOK_TIMEOUT_MS?: string;
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
  /**
   * JSON: the clusters this server reaches, instead of the single-cluster settings above:
   * [{ name, base_url?, vpc_service?, token_id, token_secret_var, access_client_id?,
   * access_secret_var?, timeout_ms? }]. The first is the default (src/config/clusters.ts).
   */
  PVE_CLUSTERS?: string;
  /** Each person's Proxmox API token: JSON, see src/config/identities.ts. */
  PVE_IDENTITIES?: string;
  /** JSON text; overrides the bundled policy.json. Seeds the policy store (version 1, then a new version when a deploy changes it). */
  POLICY?: string;
  /** Who may change the policy on /admin and its API (user ids, emails, `group:<name>`). */
  POLICY_EDITORS?: string;
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
  /** Where spans go (OTLP/HTTP, JSON): the full URL; none, nothing is recorded. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  /** The OTLP base URL, `/v1/traces` added (where OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is unset). */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  /** `key=value,...` sent with each export (a secret: an API key). */
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  /** As OTEL_EXPORTER_OTLP_HEADERS, for traces; wins per key. */
  OTEL_EXPORTER_OTLP_TRACES_HEADERS?: string;
  /** Which of OpenTelemetry's samplers (default parentbased_traceidratio). */
  OTEL_TRACES_SAMPLER?: string;
  /** The traceidratio samplers' ratio, 0 to 1 (default 1). */
  OTEL_TRACES_SAMPLER_ARG?: string;
  /** The spans' service.name (default proxmox-mcp). */
  OTEL_SERVICE_NAME?: string;
}
