// What the agent (and the person behind it) reads when a call does not run as asked, written in
// one place: the refusals no policy decided (a store that did not answer, an invalid policy, a
// missing scope), the shape of a policy refusal or a pending approval ("[POLICY DENIED]",
// "[APPROVAL REQUIRED]"), and the texts of failures the seam itself reports.

import type { Decision } from '../policy/evaluate';
import { SCOPE_INFO, type Scope } from '../core/scopes';
import type { CallResult } from './result';

export type Refusal = Exclude<Decision, { kind: 'allow' }>;

/** A call waiting for a person: where they approve it, and the id to call again with. */
export interface PendingApproval {
  approval_id: string;
  approval_url: string;
  expires_at: string;
}

/** The reasons given for refusals that no policy decided, and for a call stopped midway. */
export const REASONS = {
  policyStore:
    'The policy store did not answer in time, so this server cannot tell which policy is in force and the call is denied. Try again shortly.',
  invalidPolicy: (label: string) =>
    `The server's policy (${label}) is invalid, so every call is denied until an administrator fixes it. See /health.`,
  noApprovals: (reason: string) =>
    `${reason} Approvals are not available here, so the call is denied.`,
  approvalStore: 'The approvals store did not answer, so the call is denied. Try again shortly.',
  policyAfterApproval:
    'The policy in force could not be read after the approval, so the call is denied. Try again shortly.',
  counterStore:
    'Rate-limit counters could not be checked, so the call is denied. Try again shortly.',
  invalidPolicyMidCall: "The server's policy is invalid, so the call stops here.",
  requestsChangedSinceApproval:
    'What this call would send to Proxmox now is not what was approved: what it acts on changed since, or could not be read when it was approved. Nothing was sent. Call again without approval_id to ask for a new approval.',
  targetChangedSinceApproval: (facts: readonly string[]) =>
    `The guest's ${facts.join(', ')} changed since the call was approved: the approval is for the guest as it was judged. Nothing was sent. Call again without approval_id to ask for a new approval.`,
  changedSinceApproval:
    'The approval covers the call exactly as approved; with the arguments the server had to change it needs a new approval. Call again without approval_id to ask for one.',
  approvedApart: (reason: string, cluster: string) =>
    `${reason.replace(/\.$/, '')}: cluster ${cluster} needs an approval of its own, name it to ask for one`,
  countedApart: (counter: string, cluster: string) =>
    `the limit ${counter} counts calls to cluster ${cluster} on a counter of its own: name cluster ${cluster} to list it`,
} as const;

/** The texts of failures the seam reports itself (not a tool's, not Proxmox's). */
export const FAILURES = {
  invalidArguments: (tool: string) => `Invalid arguments for ${tool}`,
  tooDeep: (depth: number) => `nested more than ${depth} levels deep`,
  storeTimeout:
    'A store of this server did not answer in time, so the call was refused before the policy ran. Try again shortly.',
  internal: (requestId: string) => `Internal error (request ${requestId}).`,
  waitingForPerson: 'Waiting for the person to approve this call.',
} as const;

/**
 * What the agent sees for a refusal. A pending approval's text is written to be relayed as it
 * is (clients such as Claude.ai cannot be asked in the conversation, so the link is the way):
 * what to tell the user, the link alone on its line, and exactly how to call again. `pinned` are
 * arguments the server filled in that the approval covers (the vmid it picked).
 */
export function refusalResult(
  refusal: Refusal,
  tool: string,
  pending?: PendingApproval,
  pinned: Record<string, unknown> = {},
): CallResult {
  const policy = {
    decision: refusal.kind,
    rule: refusal.rule,
    reason: refusal.reason,
    ...(refusal.kind === 'limited' ? { retry_after_s: refusal.retry_after_s } : {}),
  };
  if (pending) {
    return {
      content: [{ type: 'text', text: pendingText(refusal, tool, pending, pinned) }],
      structuredContent: { policy, ...pending },
      isError: true,
    };
  }
  return {
    content: [{ type: 'text', text: `[POLICY DENIED] ${refusal.reason}` }],
    structuredContent: { policy },
    isError: true,
  };
}

function pendingText(
  refusal: Refusal,
  tool: string,
  pending: PendingApproval,
  pinned: Record<string, unknown>,
): string {
  const extra = Object.entries(pinned)
    .map(([k, v]) => ` and ${k}: ${JSON.stringify(v)}`)
    .join('');
  const pinnedNote = Object.keys(pinned).length
    ? ` The approval is for ${Object.entries(pinned)
        .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
        .join(', ')}, which the server chose for this call.`
    : '';
  return [
    `[APPROVAL REQUIRED] ${refusal.reason} Nothing was sent to Proxmox.`,
    `Tell the user: a person must approve this exact call on the approval page before it can run (the link works until ${pending.expires_at}):`,
    pending.approval_url,
    `Once it is approved, call ${tool} again with the same arguments plus approval_id: "${pending.approval_id}"${extra}.${pinnedNote}`,
  ].join('\n');
}

/** Why a call stops for want of a scope, for the agent and the person behind it. */
export function scopeMessage(tool: string, scope: Scope, held: readonly string[]): string {
  const has = held.length ? `it holds ${held.join(', ')}` : 'it holds none of this server';
  return `${tool} needs the scope ${scope}, which this client was not granted (${has}). Nothing was sent to Proxmox. To allow it, the person reconnects the client and ticks "${SCOPE_INFO[scope].label}" (${scope}) on the consent page.`;
}

/** A person PVE_IDENTITIES maps to no Proxmox token: what they are told (nothing was sent). */
export function identityRefusal(message: string): CallResult {
  return {
    content: [{ type: 'text', text: `[NO PROXMOX IDENTITY] ${message}` }],
    structuredContent: { error: { kind: 'no_identity', message } },
    isError: true,
  };
}

export function scopeRefusal(tool: string, scope: Scope, held: readonly string[]): CallResult {
  const message = scopeMessage(tool, scope, held);
  return {
    content: [{ type: 'text', text: `[SCOPE MISSING] ${message}` }],
    structuredContent: { error: { kind: 'insufficient_scope', scope, message } },
    isError: true,
  };
}
