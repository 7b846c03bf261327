// A request for a person's approval of one exact tool call. It is bound to the tool, the SHA-256
// of the canonical arguments and the grant that asked; it is single-use and expires.

import type { BlastRadius } from '../proxmox/blast-radius';
import type { RpcOf } from '../stores/stubs';

/** JSON data (what RPC to the Durable Object can carry). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** `revoked`: the grant that asked was revoked before anyone decided; the call can never be made. */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'used' | 'expired' | 'revoked';

export interface ApprovalRequest {
  tool: string;
  /** Canonical arguments, sensitive values redacted: what the approver is shown. */
  args: Record<string, Json>;
  /** The exact Proxmox parameters the call would send, when the tool can say in advance. */
  upstream: Record<string, string> | null;
  args_hmac: string;
  grant_id: string;
  user_id: string;
  user_email: string | null;
  client_id: string;
  /** From the policy: who may approve (users or group:<name>); null means the caller or an admin. */
  approvers: string[] | null;
  /** Different people who must approve (the person who asked never counts); 1 for most rules. */
  approvals_required: number;
  reason: string;
  rule: string;
  /** This server's public origin (for the approval page's address in notifications). */
  origin?: string;
  /** The receivers (APPROVAL_WEBHOOKS names) the policy sends this approval's events to; null: all. */
  notify?: string[] | null;
  /** What the call would hit, read when it was asked (null: the tool touches no one guest). */
  blast_radius?: BlastRadius | null;
}

/** One person's yes to an approval that needs several. */
export interface GivenApproval {
  /** Their verified email, or their user id. */
  by: string;
  user_id: string;
  at: number;
}

export interface Approval extends ApprovalRequest {
  id: string;
  status: ApprovalStatus;
  created_at: number;
  expires_at: number;
  decided_by: string | null;
  decided_at: number | null;
  used_at: number | null;
  /** Who approved so far, oldest first (the approval is approved once there are approvals_required). */
  approved_by: GivenApproval[];
}

/** Who is deciding, from their web session. */
export interface Decider {
  userId: string;
  login?: string;
  email?: string;
  groups: string[];
  isAdmin: boolean;
}

/**
 * The call an approval is to be spent on, and what the rule in force asks of the approval now
 * (absent terms are not checked).
 */
export interface ConsumeCall {
  tool: string;
  args_hmac: string;
  grant_id: string;
  approvals_required?: number;
  approvers?: string[] | null;
}

/** Why an approval id was not accepted for a call, in words the agent can pass on. */
export type ConsumeRefusal =
  | 'not_found'
  | 'pending'
  | 'denied'
  | 'used'
  | 'expired'
  | 'revoked'
  | 'other_call'
  | 'other_grant'
  | 'rule_changed';

/**
 * An approval spent on a call: the requests its approver was shown (null: the tool could not
 * tell before running, or its plan could not be read then). The call may send those only
 * (../writes/kernel.ts checks).
 */
export interface Spent {
  upstream: Record<string, string> | null;
}

/** The approvals Durable Object as a call's approval gate uses it (its RPC stub). */
export type ApprovalStore = RpcOf<ApprovalsObject, 'create' | 'restore' | 'consume' | 'spendOnce'>;

/** Whether a person may decide an approval: yes, or why not. */
export type DecideCheck = { ok: true } | { ok: false; reason: string };

/** Pending and decided approvals, and one-time tokens (./approvals-store.ts, which implements it). */
export interface ApprovalsObject {
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
  /** The approvals asked for since `since`, by what became of them, as of `now`. */
  figures(now: number, since: number): ApprovalFigures;
  countUndelivered(target: string): void;
  undelivered(): Record<string, number>;
  /** Marks a revoked grant's pending approvals `revoked`; how many. */
  cancelForGrant(grantId: string, by: string, now: number): Promise<number>;
}

/** What became of the approvals asked for in a window (/admin's charts, /admin/metrics.json). */
export interface ApprovalFigures {
  since: number;
  /** Approvals asked for (one withdrawn for a new ask of the same call counts once). */
  asked: number;
  /** Approved (used on the call or not yet). */
  given: number;
  refused: number;
  /** Ran out before they were decided (an approval needing several people may have had some). */
  expired: number;
  /** Their grant was revoked before anyone decided. */
  revoked: number;
  /** Withdrawn for a new ask of the same call when the policy asked more of it (not in `asked`). */
  withdrawn: number;
  /** Still waiting for a person. */
  waiting: number;
  /** How long people took to decide (approved or refused): median and 95th percentile, ms. */
  decide_p50_ms: number | null;
  decide_p95_ms: number | null;
}
