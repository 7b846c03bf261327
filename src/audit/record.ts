// One audit record: a tools/call as it was decided and answered. Argument values are stored
// only after redaction (sensitive arguments never reach storage); `args_hmac` is the SHA-256 of
// the canonical arguments, so identical calls can be matched without keeping their values.

/** The tool column of a record that is a change of the policy, not a call (../policy-store/audit-event.ts). */
export const POLICY_EVENT_TOOL = '(policy)';

/** The policy's decision; `none` when the call never reached the policy (invalid arguments). */
export type AuditDecision = 'allow' | 'deny' | 'limited' | 'approval_required' | 'none';

/** What became of the call. */
export type AuditOutcome = 'ok' | 'failed' | 'error' | 'denied' | 'invalid' | 'approval_pending';

export interface AuditRecord {
  /** Epoch ms when the call arrived. */
  ts: number;
  request_id: string;
  user_id: string;
  user_email: string | null;
  client_id: string;
  grant_id: string;
  session: string;
  tool: string;
  arg_keys: string[];
  /**
   * HMAC-SHA256 (hex) of the canonical arguments under a key only this server holds (see
   * ./arg-hash.ts): identical calls match, and a short secret argument cannot be recovered by
   * hashing guesses. (The name predates the key; the digest is still SHA-256.)
   */
  args_hmac: string;
  /**
   * Argument values as shown (property strings as their text, server-filled ones included),
   * sensitive ones replaced by "[redacted]"; under INHERITED_KEY, what the call takes from its
   * source where it leaves an argument out (a clone's memory, NIC...); under TARGET_KEY, the
   * facts of its guest the policy read.
   */
  args: Record<string, unknown>;
  decision: AuditDecision;
  /** The policy rule that fired (JSON pointer or "(default deny)"...), or null. */
  rule: string | null;
  outcome: AuditOutcome;
  error_kind: string | null;
  upstream_status: number | null;
  latency_ms: number;
  /**
   * How long the call's requests to Proxmox took, added up (requests made side by side each
   * count); null where none was sent, and in records from before it was kept.
   */
  upstream_ms: number | null;
  vmid: number | null;
  upid: string | null;
  approval_id: string | null;
  /** How a person approved the call: `conversation` (MCP elicitation) or `web` (the approval page). */
  approval_channel: ApprovalChannel | null;
  /** The version of the policy that decided (null: no stored version decided, or before versions). */
  policy_version: number | null;
  /** The caller's groups as the policy saw them (null in records from before they were kept). */
  user_groups: string[] | null;
  /** The scopes of the caller's token (null in records from before they were kept). */
  user_scopes: string[] | null;
  /**
   * The cluster the call was for (PVE_CLUSTERS' name, `default` with the single-cluster settings;
   * null for what no cluster is asked about, and in records from before clusters).
   */
  cluster: string | null;
  /**
   * The Proxmox API token the call's requests went with (its id, `user@realm!name`; never its
   * secret), where PVE_IDENTITIES gives each person one: the person's own, the fallback's, or a
   * cluster's own token where the mapping names none there. Space-separated where a list read
   * several clusters with different tokens. Absent without PVE_IDENTITIES (the token the
   * configuration names acted), where nothing was sent, and in records from before it was kept.
   */
  pve_token?: string | null;
  /**
   * The call's trace id (W3C Trace Context, 32 hex digits), as in its log line: the client's
   * trace continued, or one started here. Absent in records from before it was kept.
   */
  trace_id?: string | null;
}

export type ApprovalChannel = 'conversation' | 'web';

/** Where a record's `args` (and the approver) keep what a call inherits from its source. */
export const INHERITED_KEY = '(inherited)';

/**
 * Where a record's `args` (and the approver) keep the facts of the guest the call acts on that
 * the policy read before deciding (its pool, tags...): null for one the guest has none of,
 * UNREAD_PREFIX and why for one that could not be read.
 */
export const TARGET_KEY = '(target)';

/** How a record keeps a fact that was not read (see TARGET_KEY). */
export const UNREAD_PREFIX = 'unread: ';

export interface StoredAuditRecord extends AuditRecord {
  id: number;
}

export interface AuditQuery {
  user?: string;
  tool?: string;
  decision?: AuditDecision;
  outcome?: AuditOutcome;
  cluster?: string;
  /** Inclusive epoch ms bounds on ts. */
  from?: number;
  to?: number;
  /** Opaque cursor from a previous page (newest first). */
  cursor?: string;
  /** 1–1000. */
  limit: number;
}

export interface AuditPage {
  records: StoredAuditRecord[];
  next_cursor: string | null;
}

export interface AuditStats {
  count: number;
  oldest_ts: number | null;
  newest_ts: number | null;
  /** Records that could not be written (counted by the writer's fallback). */
  lost: number;
  retention_days: number;
  max_rows: number;
  /** Bytes of the instance's SQLite database (Durable Object storage holds at most 10 GB). */
  db_bytes: number;
  /** Invalid AUDIT_RETENTION_DAYS / AUDIT_MAX_ROWS values, replaced by their defaults. */
  config_problems: string[];
}

/** The audit trail, or the count of records that could not be written (./audit-log.ts, which implements it). */
export interface AuditObject {
  append(record: AuditRecord): Promise<void>;
  query(q: AuditQuery): AuditPage;
  get(id: number): StoredAuditRecord | null;
  prune(now: number): { deleted: number };
  stats(): AuditStats;
  /** Recent activity as of `now` (./figures.ts), calls only (policy changes left out). */
  figures(now: number): AuditFigures;
  recordLost(n: number): void;
  /** The key of an older deployment that kept its server keys here, if it had made one (for ServerKeys to take over). */
  legacyServerKey(name: string): string | null;
}

// Recent activity as read from the records (./figures.ts says how).

export interface HourCounts {
  /** The hour's start (epoch ms, on the UTC hour). */
  start: number;
  counts: Record<AuditDecision, number>;
}

export interface LatencyHour {
  start: number;
  /** Calls in the hour; of them, `upstream_calls` sent Proxmox something. */
  calls: number;
  p50_ms: number | null;
  p95_ms: number | null;
  upstream_calls: number;
  upstream_p50_ms: number | null;
  upstream_p95_ms: number | null;
}

export interface Ranked {
  name: string;
  count: number;
}

export interface AuditFigures {
  /** When they were read. */
  at: number;
  /** The last 24 hours, the current one last. */
  day: HourCounts[];
  /** The last 168 hours (7 days), the current one last. */
  week: HourCounts[];
  /** Over the week: the tools and the rules with the most refused calls (deny, limited). */
  refusing: { tools: Ranked[]; rules: Ranked[] };
  /** Over the day, per hour. */
  latency: LatencyHour[];
}
