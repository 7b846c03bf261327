// Where the policy meets a call: evaluate (pure), then reserve rate-limit slots in the counter
// store. Fails closed: a broken policy or a counter store that cannot answer denies the call.
// What the agent sees for a refusal is built here too: an isError result starting
// "[POLICY DENIED]" with {policy: {decision, rule, reason, retry_after_s?}}.

import { errorText, logLine } from '../log';
import type { CallResult } from './result';
import { reserveLimits, type CounterBackend } from '../counters/reserve';
import type { Identity } from '../identity';
import { evaluatePolicy, type Decision } from '../policy/evaluate';
import { formatErrors } from '../policy/load';
import { type ActivePolicy, policyLabel } from '../policy/source';
import { UNDECIDED_RULES } from '../policy/undecided';

import type { ApprovalPort } from './approval-gate';
import type { AskNext } from './conversation';

export type Refusal = Exclude<Decision, { kind: 'allow' }>;

export { UNDECIDED_RULES };

/** A call waiting for a person: where they approve it, and the id to call again with. */
export interface PendingApproval {
  approval_id: string;
  approval_url: string;
  expires_at: string;
}

export type GateResult =
  | { ok: true; release: (() => Promise<void>) | null; approvalId: string | null }
  | { ok: false; refusal: Refusal; pending?: PendingApproval }
  /** Nothing ran: the person is asked, and answers with the next request (2026-07-28). */
  | { ok: false; suspended: AskNext };

export interface GateInput {
  tool: string;
  /** Validated arguments in their policy view (property strings as field objects). */
  args: Record<string, unknown>;
  identity: Identity;
  /** A preview or read that writes nothing: no rate-limit slot is taken. */
  dryRun: boolean;
  now: number;
  /**
   * The policy in force now: asked again once an approval was given (a person may take minutes
   * to answer in the conversation, and a version activated meanwhile decides the call).
   */
  current?: () => Promise<ActivePolicy>;
  /** Told which version decided, when it is not the one the call began with. */
  decidedBy?: (active: ActivePolicy) => void;
}

export async function passGate(
  active: ActivePolicy,
  counters: CounterBackend,
  input: GateInput,
  approvals: ApprovalPort | null = null,
): Promise<GateResult> {
  if (!active.ok && active.unavailable) {
    return {
      ok: false,
      refusal: {
        kind: 'deny',
        rule: UNDECIDED_RULES.policyStore,
        reason:
          'The policy store did not answer in time, so this server cannot tell which policy is in force and the call is denied. Try again shortly.',
      },
    };
  }
  if (!active.ok) {
    logLine('error', 'policy_invalid', {
      origin: policyLabel(active),
      errors: formatErrors(active.errors).slice(0, 2000),
    });
    return {
      ok: false,
      refusal: {
        kind: 'deny',
        rule: UNDECIDED_RULES.invalidPolicy,
        reason: `The server's policy (${policyLabel(active)}) is invalid, so every call is denied until an administrator fixes it. See /health.`,
      },
    };
  }
  const call = { tool: input.tool, args: input.args };
  let decision = evaluatePolicy(active.policy, call, input.identity, null, input.now);
  let approvalId: string | null = null;
  if (decision.kind === 'approval_required' && input.dryRun) {
    // A preview sends nothing to Proxmox: it needs no approval (the confirmed call will).
    decision = evaluatePolicy(
      active.policy,
      { ...call, approved: true },
      input.identity,
      null,
      input.now,
    );
  }
  if (decision.kind === 'approval_required') {
    if (!approvals) {
      return {
        ok: false,
        refusal: {
          ...decision,
          reason: `${decision.reason} Approvals are not available here, so the call is denied.`,
        },
      };
    }
    let outcome;
    try {
      outcome = await approvals.resolve(decision);
    } catch (err) {
      logLine('error', 'approval_store_error', { error: errorText(err) });
      return {
        ok: false,
        refusal: {
          kind: 'deny',
          rule: UNDECIDED_RULES.approvalStore,
          reason: 'The approvals store did not answer, so the call is denied. Try again shortly.',
        },
      };
    }
    if (outcome.kind === 'ask_next_request') return { ok: false, suspended: outcome };
    if (outcome.kind === 'refused')
      return { ok: false, refusal: { kind: 'deny', rule: decision.rule, reason: outcome.reason } };
    if (outcome.kind === 'pending') {
      const { kind: _pending, ...pending } = outcome;
      return { ok: false, refusal: decision, pending };
    }
    approvalId = outcome.approvalId;
    const spent = approvalId;
    const giveBackNow = (): Promise<void> => approvals.restore(spent).catch(() => undefined);
    // Approved: the rest of the policy (limits) still applies, as the policy in force now says.
    let deciding: ActivePolicy = active;
    if (input.current) {
      deciding = await input.current();
      if (deciding.version !== active.version) input.decidedBy?.(deciding);
      if (!deciding.ok) {
        await giveBackNow();
        return {
          ok: false,
          refusal: {
            kind: 'deny',
            rule: deciding.unavailable
              ? UNDECIDED_RULES.policyStore
              : UNDECIDED_RULES.invalidPolicy,
            reason:
              'The policy in force could not be read after the approval, so the call is denied. Try again shortly.',
          },
        };
      }
    }
    decision = evaluatePolicy(
      deciding.ok ? deciding.policy : active.policy,
      { ...call, approved: true },
      input.identity,
      null,
      input.now,
    );
  }
  // A spent approval is given back when the call is refused after all (limits, store errors).
  const giveBack = async (): Promise<void> => {
    if (approvalId && approvals) await approvals.restore(approvalId).catch(() => undefined);
  };
  if (decision.kind !== 'allow') {
    await giveBack();
    return { ok: false, refusal: decision };
  }
  if (input.dryRun || decision.limits.length === 0) return { ok: true, release: null, approvalId };
  try {
    const reservation = await reserveLimits(decision.limits, input.identity, counters, input.now);
    if (!reservation.ok) await giveBack();
    return reservation.ok
      ? { ok: true, release: reservation.release, approvalId }
      : { ok: false, refusal: reservation.decision as Refusal };
  } catch (err) {
    await giveBack();
    logLine('error', 'counter_store_error', { error: errorText(err) });
    return {
      ok: false,
      refusal: {
        kind: 'deny',
        rule: UNDECIDED_RULES.counterStore,
        reason:
          'Rate-limit counters could not be checked, so the call is denied. Try again shortly.',
      },
    };
  }
}

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
    const extra = Object.entries(pinned)
      .map(([k, v]) => ` and ${k}: ${JSON.stringify(v)}`)
      .join('');
    const pinnedNote = Object.keys(pinned).length
      ? ` The approval is for ${Object.entries(pinned)
          .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
          .join(', ')}, which the server chose for this call.`
      : '';
    const text = [
      `[APPROVAL REQUIRED] ${refusal.reason} Nothing was sent to Proxmox.`,
      `Tell the user: a person must approve this exact call on the approval page before it can run (the link works until ${pending.expires_at}):`,
      pending.approval_url,
      `Once it is approved, call ${tool} again with the same arguments plus approval_id: "${pending.approval_id}"${extra}.${pinnedNote}`,
    ].join('\n');
    return {
      content: [{ type: 'text', text }],
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
