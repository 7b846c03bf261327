// Whether the version in shadow would have decided a live call otherwise than the active one.
// Both are judged on the rules alone (deny_if, require, approval; a preview needs no approval),
// not on rate-limit counts, which only the active policy keeps: a replay (../replay/replay.ts)
// compares limits.
//
// The active version decides on the call as it is; the shadow judges only what the audit trail
// keeps of it (../replay/recorded-call.ts), as a replay would: a shadow is read by people (its
// disagreements, which rule fired), and a draft's rule on a value the trail redacts would read
// that value back a character at a time. A shadow rule that needs such a value is `unknown`.

import type { z } from 'zod';
import type { Identity } from '../core/identity';
import { evaluatePolicy } from '../policy/evaluate';
import type { CompiledPolicy } from '../policy/load';
import type { ShadowDisagreement } from '../policy/shadow';
import type { ActivePolicy } from '../policy/source';
import { UnknownReached } from '../policy/unknown';
import {
  clusterOf,
  keptFacts,
  type MakesOf,
  recordedCall,
  recordedMade,
  recordedTarget,
  type TargetOf,
} from '../replay/recorded-call';

export interface ShadowInput {
  tool: string;
  /** The arguments as the active policy sees them (policyView). */
  args: Record<string, unknown>;
  /** The arguments as the audit trail keeps them (redacted by the active version). */
  stored: Record<string, unknown>;
  /** The tool's input schema, to read the stored arguments back as a replay does. */
  input: z.ZodObject;
  identity: Identity;
  /** The facts of the call's guest the active version read (see CallView.target). */
  targetFacts?: Readonly<Record<string, unknown>>;
  /** How the tool names the guest a call acts on (ToolSpec.target): what a record tells of it. */
  targetOf?: TargetOf;
  /** The guest the call makes beside it, as the active version saw it, and how the tool names it. */
  made?: Readonly<Record<string, unknown>>;
  makesOf?: MakesOf;
  /** What the tool takes from its source, and began to take later: read back as a replay does. */
  inherits?: Readonly<Record<string, readonly string[] | null>>;
  newlyInherited?: readonly string[];
  dryRun: boolean;
  now: number;
  requestId: string;
}

interface Judged {
  decision: string;
  rule: string | null;
}

export function shadowDisagreement(
  active: Extract<ActivePolicy, { ok: true }>,
  input: ShadowInput,
): ShadowDisagreement | null {
  const shadow = active.shadow;
  if (!shadow) return null;
  const judge = (
    policy: CompiledPolicy,
    args: Record<string, unknown>,
    target: Readonly<Record<string, unknown>> | undefined,
    made: Readonly<Record<string, unknown>> | undefined,
  ): Judged => {
    const call = { tool: input.tool, args, target, made };
    let d = evaluatePolicy(policy, call, input.identity, null, input.now);
    if (d.kind === 'approval_required' && input.dryRun)
      d = evaluatePolicy(policy, { ...call, approved: true }, input.identity, null, input.now);
    return { decision: d.kind, rule: d.kind === 'allow' ? null : d.rule };
  };
  const now = judge(active.policy, input.args, input.targetFacts, input.made);
  let then: Judged;
  try {
    const recorded = recordedCall(input.stored, input.input, input.inherits, input.newlyInherited);
    // A record names its cluster only where there are several; the call's is the default then.
    recorded.view.cluster ??= input.args.cluster;
    const target = recordedTarget(
      input.targetOf,
      recorded.args,
      recorded.facts,
      typeof recorded.view.cluster === 'string' ? recorded.view.cluster : undefined,
    );
    const made = recordedMade(input.makesOf, recorded.args, recorded.inherited);
    then = judge(shadow.policy, recorded.view, target, made);
  } catch (err) {
    if (!(err instanceof UnknownReached)) throw err;
    then = { decision: 'unknown', rule: err.rule };
  }
  if (now.decision === then.decision) return null;
  const guest = keptFacts(input.stored);
  return {
    ts: input.now,
    request_id: input.requestId,
    user: input.identity.email ?? input.identity.userId,
    user_id: input.identity.userId,
    tool: input.tool,
    ...clusterOf(input.stored),
    active: { version: active.version ?? 0, ...now },
    shadow: { version: shadow.version, ...then },
    ...(guest ? { guest } : {}),
  };
}
