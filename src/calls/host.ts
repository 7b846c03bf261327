// What a call needs from the world around it, whichever MCP era serves it: who calls and the
// Proxmox client (the scope), the policy, the counters, approvals, the audit trail, the scrubber
// and the argument hash. Built by the composition root (../compose/); the era adapters in
// ../mcp/ add only their session id, their session counters and their conversation.

import type { AuditRecord } from '../audit/record';
import type { Clock } from '../clock';
import type { ApprovalStore } from '../approvals/types';
import type { CounterBackend } from '../counters/reserve';
import type { ActivePolicy } from '../policy/source';
import type { ShadowDisagreement } from '../policy/shadow';
import type { UpstreamCall } from '../proxmox/client';
import type { Scrubber } from '../secrets/scrub';
import type { BaseToolContext } from './tool-spec';
import type { CallSpanFacts, CallSpans } from './spans';
import type { CallTrace } from './trace';

/** One call's context, plus what the seam needs to log it. */
export interface CallScope {
  ctx: BaseToolContext;
  /** The upstream exchanges made so far during this call. */
  upstream(): readonly UpstreamCall[];
  /**
   * The ids of the API tokens that sent this call's requests so far, each once, where each
   * person acts with a token of their own (PVE_IDENTITIES); none otherwise.
   */
  tokens(): readonly string[];
  /**
   * The cluster the call is for (before its first request; until then, the default), and
   * whether the call named it (`cluster`) or left it to the default.
   */
  onCluster(name: string, given: boolean): void;
}

/** What a call's end tells beside its audit record. */
export interface CallMeasures {
  /** Its spans, ended but for the audit write's. */
  spans: CallSpans;
  /** How long it waited for an approval (ms); null where the policy wanted none. */
  approvalWaitMs: number | null;
}

export interface CallHost {
  /** The time, for the call's timings, windows and deadlines. */
  clock: Clock;
  /**
   * A fresh scope for one call, its requests to Proxmox spans of `spans`; throws a ToolFailure
   * when the caller has no identity.
   */
  scope(requestId: string, spans: CallSpans): CallScope;
  /** The spans of one call of `trace` (recorded where tracing is configured and it is sampled). */
  spans(trace: CallTrace, facts: CallSpanFacts): CallSpans;
  /** The clusters' names, the default first (`cluster` is an argument only with more than one). */
  clusters: readonly string[];
  /** The MCP session (or `stateless`), for logs and the audit trail. */
  sessionId(): string;
  /** The policy in force (and the version in shadow beside it, if any). */
  policy(): Promise<ActivePolicy>;
  /** Counts a call the shadow version would have decided otherwise, without waiting for it. */
  shadowDisagreement(d: ShadowDisagreement): void;
  /** Where rate-limit counters live. */
  counters(): CounterBackend;
  /** Human approvals: the store, the page for an id, how long an approval lasts. */
  approvals(): {
    store: () => ApprovalStore;
    url: (id: string) => string;
    /** This server's public origin (where notifications send approvers). */
    origin: () => string;
    ttlMs: number;
  };
  /**
   * Records the call in the audit trail and its data point, then exports its spans, without
   * waiting for any of it or failing the call.
   */
  audit(record: AuditRecord, call: CallMeasures): void;
  /**
   * Removes configured secrets from results, log lines and audit records; with `hidden`, also
   * the values a call's redaction hid (its sensitive arguments), for that call's own output.
   */
  scrubber(hidden?: readonly string[]): Scrubber;
  /** The keyed hash of canonical arguments (audit records, approvals). */
  hmacArgs(canonical: string): Promise<string>;
}
