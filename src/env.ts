// The configuration contract: every binding and variable the Worker reads (each works with
// `wrangler dev --var NAME:VALUE`). ./config/ parses the variables, once, into a checked
// configuration; ./compose/ turns the bindings into the Runtime's ports. The Durable Object
// bindings are typed by what their objects answer (small interfaces, which the classes
// implement), not by the classes: this file imports no code, so nothing can import it in a circle.

import type {
  Approval,
  ApprovalRequest,
  ConsumeCall,
  ConsumeRefusal,
  Decider,
  Spent,
} from './approvals/types';
import type { DecideCheck } from './approvals/rules';
import type {
  AuditPage,
  AuditQuery,
  AuditRecord,
  AuditStats,
  StoredAuditRecord,
} from './audit/record';
import type { CounterRow, ReserveItem } from './counters/window-counters';
import type { LimitedDecision } from './policy/evaluate';
import type { NotifyMessage } from './notify/event-formats';
import type {
  NewVersion,
  PolicyEvent,
  PolicyHead,
  PolicyOverview,
  PolicyVersion,
  ShadowDisagreement,
  StoreAnswer,
} from './policy-store/types';

/** One 2025 MCP session (McpAgent, mcp/legacy/agent.ts): whose it is, and its end on a revocation. */
export interface SessionObject extends Rpc.DurableObjectBranded {
  owner(): Promise<{ userId: string; grantId: string; scopes: readonly string[] } | null>;
  endSession(): Promise<void>;
}

/** The rate-limit counters of one scope key (counters/policy-counters.ts). */
export interface CountersObject extends Rpc.DurableObjectBranded {
  reserve(items: ReserveItem[], now: number): LimitedDecision | null;
  release(items: Pick<ReserveItem, 'key' | 'windowStart'>[]): void;
  list(now: number): CounterRow[];
}

/** Pending and decided approvals, and one-time tokens (approvals/approvals-store.ts). */
export interface ApprovalsObject extends Rpc.DurableObjectBranded {
  create(request: ApprovalRequest, now: number, ttlMs: number): Promise<Approval | null>;
  get(id: string): Approval | null;
  decide(
    id: string,
    decision: 'approve' | 'deny',
    decider: Decider,
    now: number,
  ): Promise<DecideCheck>;
  consume(id: string, call: ConsumeCall, now: number): ConsumeRefusal | Spent;
  restore(id: string): void;
  spendOnce(token: string, expiresAt: number, now: number): Promise<boolean>;
  pending(now: number): Approval[];
  countUndelivered(target: string): void;
  undelivered(): Record<string, number>;
  /** Marks a revoked grant's pending approvals `revoked`; how many. */
  cancelForGrant(grantId: string, by: string, now: number): Promise<number>;
}

/** The audit trail, or the count of records that could not be written (audit/audit-log.ts). */
export interface AuditObject extends Rpc.DurableObjectBranded {
  append(record: AuditRecord): Promise<void>;
  query(q: AuditQuery): AuditPage;
  get(id: number): StoredAuditRecord | null;
  prune(now: number): { deleted: number };
  stats(): AuditStats;
  recordLost(n: number): void;
  /** The key of an older deployment that kept its server keys here, if it had made one (for ServerKeys to take over). */
  legacyServerKey(name: string): string | null;
}

/** The server's own secret keys, each made once (keys/server-keys.ts). */
export interface KeysObject extends Rpc.DurableObjectBranded {
  key(name: 'args_hmac' | 'request_state'): Promise<string>;
}

/** The policy's versions, the active and the shadow one, and their history (policy-store/policy-store.ts). */
export interface PolicyStoreObject extends Rpc.DurableObjectBranded {
  head(
    deployed: { sha256: string; text?: string },
    known: number | null,
    now: number,
  ): Promise<PolicyHead>;
  overview(): PolicyOverview;
  get(version: number): PolicyVersion | null;
  add(
    input: NewVersion,
    now: number,
  ): Promise<StoreAnswer<{ version: number; event: PolicyEvent }>>;
  activate(
    version: number,
    actor: string,
    comment: string,
    now: number,
    base?: number,
    forced?: boolean,
  ): StoreAnswer<{ event: PolicyEvent }>;
  shadow(
    version: number | null,
    actor: string,
    comment: string,
    now: number,
    base?: number,
    forced?: boolean,
  ): StoreAnswer<{ event: PolicyEvent }>;
  recordDisagreement(d: ShadowDisagreement): void;
  disagreements(version: number, limit: number): ShadowDisagreement[];
}

export interface AppEnv {
  /** One object per 2025 MCP session (McpAgent). */
  MCP_OBJECT: DurableObjectNamespace<SessionObject>;
  /** Rate-limit counters of the grant, user and global scopes (one object per scope key). */
  POLICY_COUNTERS: DurableObjectNamespace<CountersObject>;
  /** Pending and decided human approvals (one object). */
  APPROVALS: DurableObjectNamespace<ApprovalsObject>;
  /** The audit trail (one object for records, one for the count of lost records). */
  AUDIT: DurableObjectNamespace<AuditObject>;
  /** The server's own keys: the argument HMAC's, the 2026 request state's (one object). */
  SERVER_KEYS: DurableObjectNamespace<KeysObject>;
  /** The policy's versions and which one is active (one object). */
  POLICY_STORE: DurableObjectNamespace<PolicyStoreObject>;
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
}
