// Where the policy meets a call: evaluate (pure), then reserve rate-limit slots in the counter
// store. Fails closed: a broken policy or a counter store that cannot answer denies the call.
// What the agent sees for a refusal is built here too: an isError result starting
// "[POLICY DENIED]" with {policy: {decision, rule, reason, retry_after_s?}}.

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { reserveLimits, type CounterBackend } from '../counters/reserve';
import type { Identity } from '../identity';
import { evaluatePolicy, type Decision } from '../policy/evaluate';
import { formatErrors } from '../policy/load';
import type { ActivePolicy } from '../policy/source';

export type Refusal = Exclude<Decision, { kind: 'allow' }>;

export type GateResult =
  | { ok: true; release: (() => Promise<void>) | null }
  | { ok: false; refusal: Refusal };

export interface GateInput {
  tool: string;
  /** Validated arguments in their policy view (property strings as field objects). */
  args: Record<string, unknown>;
  identity: Identity;
  /** A preview or read that writes nothing: no rate-limit slot is taken. */
  dryRun: boolean;
  now: number;
}

export async function passGate(active: ActivePolicy, counters: CounterBackend, input: GateInput): Promise<GateResult> {
  if (!active.ok) {
    console.error(JSON.stringify({ msg: 'policy_invalid', origin: active.origin, errors: formatErrors(active.errors).slice(0, 2000) }));
    return {
      ok: false,
      refusal: {
        kind: 'deny',
        rule: '(invalid policy)',
        reason: `The server's policy (${active.origin}) is invalid, so every call is denied until an administrator fixes it. See /health.`,
      },
    };
  }
  const decision = evaluatePolicy(active.policy, { tool: input.tool, args: input.args }, input.identity, null, input.now);
  if (decision.kind !== 'allow') return { ok: false, refusal: decision };
  if (input.dryRun || decision.limits.length === 0) return { ok: true, release: null };
  try {
    const reservation = await reserveLimits(decision.limits, input.identity, counters, input.now);
    return reservation.ok ? { ok: true, release: reservation.release } : { ok: false, refusal: reservation.decision as Refusal };
  } catch (err) {
    console.error(JSON.stringify({ msg: 'counter_store_error', error: err instanceof Error ? err.message.slice(0, 300) : 'unknown' }));
    return {
      ok: false,
      refusal: { kind: 'deny', rule: '(counter store unavailable)', reason: 'Rate-limit counters could not be checked, so the call is denied. Try again shortly.' },
    };
  }
}

export function refusalResult(refusal: Refusal): CallToolResult {
  const policy = {
    decision: refusal.kind,
    rule: refusal.rule,
    reason: refusal.reason,
    ...(refusal.kind === 'limited' ? { retry_after_s: refusal.retry_after_s } : {}),
  };
  return {
    content: [{ type: 'text', text: `[POLICY DENIED] ${refusal.reason}` }],
    structuredContent: { policy },
    isError: true,
  };
}
