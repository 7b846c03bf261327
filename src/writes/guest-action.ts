// The one way a tool changes a guest with one request (power actions, snapshots, delete, resize,
// migrate, config): read the guest's current state, judge the call against it (refusing early,
// with the reason, what Proxmox would refuse or what makes no sense), and then either preview —
// the exact method, path and parameters, the state, what the action means for it — or, with
// confirm: true, send the one request, which starts a Proxmox task (optionally waited for) or,
// for a container's config, is applied at once. A request whose answer was lost may or may not
// have been carried out: the result says so, and the call keeps its rate-limit slot.

import { z } from 'zod';
import { ToolFailure, type ToolSpec } from '../calls/tool-spec';
import { readBlastRadius, type BlastOptions } from '../proxmox/blast-radius';
import { blastRadiusLines } from '../proxmox/blast-radius-text';
import type { PveClient } from '../proxmox/client';
import { outputExtras } from '../calls/result';
import { requestOutput, taskOutput } from './output';
import { defineWriteTool, type NothingToSend, type PlanContext, type WritePlan } from './kernel';
import { type PlanSent, stepRequest } from './plan';
import type { WriteRequest } from './request';
import {
  describeState,
  guestLabel,
  readGuestState,
  type GuestRef,
  type GuestState,
} from '../proxmox/guest-state';
import type { Scope } from '../core/scopes';

/** The one request an action sends. */
export interface ActionRequest extends WriteRequest {
  /** Proxmox applies it at once and answers null (a container's config), instead of starting a task. */
  sync?: boolean;
}

/**
 * Whether the call makes sense for the guest as it is now, and what it means for it. `unchanged`:
 * the guest already is as asked (a stop of a stopped guest), so nothing is sent and the call
 * succeeds: the action is idempotent however Proxmox would have taken the repeat.
 */
export type Verdict =
  | { ok: true; note: string; details?: Record<string, unknown> }
  | { ok: false; reason: string }
  | { ok: 'unchanged'; note: string };

/** The arguments every guest action has (PLG's, plus wait and timeout_s). */
export interface ActionArgs extends GuestRef {
  confirm: boolean;
  wait: boolean;
  timeout_s: number;
}

export interface GuestActionSpec<I extends z.ZodObject> {
  name: string;
  /** The OAuth scope the action needs (../core/scopes.ts). */
  scope: Scope;
  title: string;
  description: string;
  /** The action loses data or state (a hard stop, a rollback, a deleted snapshot). */
  destructive: boolean;
  /** Repeating it has no further effect (a second stop finds the guest stopped). */
  idempotent: boolean;
  input: I;
  /** Fields of parsed arguments that policy rules may reach into (args.size.gib). */
  policyFields?: Readonly<Record<string, readonly string[]>>;
  /** ToolSpec.judgedBy: what an approver must read to judge the call. */
  judgedBy?: readonly string[];
  request(args: z.output<I>): ActionRequest;
  /** Checks that need no read (arguments valid together); throws a ToolFailure. */
  precheck?(args: z.output<I>): void;
  judge(args: z.output<I>, state: GuestState, ctx: PlanContext): Verdict | Promise<Verdict>;
  /** What the task does, for texts: "start", "create snapshot pre_upgrade". */
  doing(args: z.output<I>): string;
  /**
   * What the blast radius warns about for this call: `lossy` when it loses the guest's current
   * data ("destroy it", "roll it back to pre_upgrade"), `withoutPurge` for a destroy without purge.
   */
  warns?(args: z.output<I>): BlastOptions;
}

const output = z.object({
  mode: z.enum(['preview', 'started', 'applied', 'unchanged']).optional(),
  guest: z
    .object({ name: z.string().nullable(), status: z.string(), lock: z.string().nullable() })
    .partial()
    .optional(),
  request: requestOutput.optional(),
  note: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  blast_radius: z.record(z.string(), z.unknown()).optional(),
  upid: z.string().optional(),
  task: taskOutput.optional(),
  next_step: z.string().optional(),
  ...outputExtras,
});

export function defineGuestAction<I extends z.ZodObject>(spec: GuestActionSpec<I>): ToolSpec {
  type Args = z.output<I> & ActionArgs;
  return defineWriteTool<I, typeof output, Seen>({
    name: spec.name,
    scope: spec.scope,
    description: spec.description,
    input: spec.input,
    output,
    title: spec.title,
    destructive: spec.destructive,
    idempotent: spec.idempotent,
    ...(spec.policyFields ? { policyFields: spec.policyFields } : {}),
    ...(spec.judgedBy ? { judgedBy: spec.judgedBy } : {}),
    target: (args) => ({ vmid: (args as Args).vmid }),
    blastRadius: (args, ctx) => radiusOf(spec, args as Args, ctx.pve()),
    plan: (args, ctx) => planAction(spec, args as Args, ctx),
    report: (args, plan, sent) => reportAction(spec, args as Args, plan, sent),
  });
}

/** What the plan saw of the guest, for the result. */
interface Seen {
  label: string;
  guest: { name: string | null; status: string; lock: string | null };
  note: string;
  details?: Record<string, unknown>;
}

/** Reads the guest and judges the action: its one request, or nothing to send. */
async function planAction<I extends z.ZodObject>(
  spec: GuestActionSpec<I>,
  args: z.output<I> & ActionArgs,
  ctx: PlanContext,
): Promise<WritePlan<Seen> | NothingToSend> {
  const raw = args as z.output<I>;
  spec.precheck?.(raw);
  const pve = ctx.pve();
  const state = await readGuestState(pve, args);
  const label = guestLabel(args, state.name ?? undefined);
  const verdict = await spec.judge(raw, state, ctx);
  if (!verdict.ok)
    throw new ToolFailure('conflict', `${verdict.reason} Nothing was sent to Proxmox.`);
  const guest = { name: state.name, status: describeState(state), lock: state.lock };
  if (verdict.ok === 'unchanged') {
    return {
      unchanged: {
        structured: { mode: 'unchanged', guest, note: verdict.note },
        text: `${label} on ${args.node}: ${verdict.note} Nothing to do; nothing was sent to Proxmox.`,
      },
    };
  }
  const details = verdict.details ? { details: verdict.details } : {};
  const doing = spec.doing(raw);
  const { sync, ...request } = spec.request(raw);
  // What the call would hit is read for a preview only: a confirmed call's approver reads it.
  const radius = args.confirm ? null : await radiusOf(spec, args, pve);
  return {
    steps: [{ ...request, doing, answer: sync ? 'applied' : 'task' }],
    lead: [`${label} on ${args.node} is ${describeState(state)}. ${verdict.note}`],
    after: radius ? blastRadiusLines(radius, ctx.clock.now()) : [],
    shown: {
      guest,
      note: verdict.note,
      ...details,
      ...(radius ? { blast_radius: radius as unknown as Record<string, unknown> } : {}),
    },
    requestsAs: 'request',
    next: { doing },
    lost: () =>
      `The request to ${doing} ${label} may or may not have reached Proxmox: check the guest (pve_get_vm_status) or its tasks before trying again.`,
    facts: { label, guest, note: verdict.note, ...details },
  };
}

/** The action's result: applied at once, or its task started (and how it ended, when waited for). */
function reportAction<I extends z.ZodObject>(
  spec: GuestActionSpec<I>,
  args: z.output<I> & ActionArgs,
  plan: WritePlan<Seen>,
  sent: PlanSent,
) {
  const { label, ...seen } = plan.facts;
  const doing = spec.doing(args as z.output<I>);
  const o = sent.outcomes[0]!;
  const reported = { ...seen, request: stepRequest(o.step) };
  if (!o.upid) {
    return {
      structured: { mode: 'applied' as const, ...reported },
      text: `${label} on ${args.node}: done (${doing}); Proxmox applied it at once.`,
    };
  }
  const head = `${label} on ${args.node}: ${doing} started, task ${o.upid}.`;
  return {
    structured: {
      mode: 'started' as const,
      ...reported,
      upid: o.upid,
      ...(o.task ? { task: o.task.state } : {}),
    },
    text: o.task
      ? `${head} ${o.task.summary}`
      : `${head} Use wait: true to wait for it, or follow it with pve_get_task_status.`,
    isError: o.task?.state.succeeded === false,
  };
}

function radiusOf<I extends z.ZodObject>(
  spec: GuestActionSpec<I>,
  args: z.output<I> & ActionArgs,
  pve: PveClient,
) {
  return readBlastRadius(
    pve,
    { node: args.node, vmid: args.vmid, vm_type: args.vm_type },
    spec.warns?.(args) ?? {},
  );
}
