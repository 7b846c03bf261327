// The one way a tool changes a guest with one request (power actions, snapshots, delete, resize,
// migrate, config): read the guest's current state, judge the call against it (refusing early,
// with the reason, what Proxmox would refuse or what makes no sense), and then either preview —
// the exact method, path and parameters, the state, what the action means for it — or, with
// confirm: true, send the one request, which starts a Proxmox task (optionally waited for) or,
// for a container's config, is applied at once. A request whose answer was lost may or may not
// have been carried out: the result says so, and the call keeps its rate-limit slot.

import { z } from 'zod';
import { defineTool, ToolFailure, type ToolContext, type ToolSpec } from '../calls/tool-spec';
import { readBlastRadius, type BlastOptions } from '../proxmox/blast-radius';
import { blastRadiusLines } from '../proxmox/blast-radius-text';
import type { PveClient } from '../proxmox/client';
import { upidString } from '../proxmox/schemas';
import { outputExtras } from '../calls/result';
import { requestOutput, taskOutput } from './output';
import { NOTHING_SENT, nextStep } from './preview';
import { requestLine, requestRows, requestView, sendWrite, type WriteRequest } from './request';
import {
  describeState,
  guestLabel,
  readGuestState,
  type GuestRef,
  type GuestState,
} from '../proxmox/guest-state';
import { waitForTask } from './task-wait';
import type { Scope } from '../scopes';

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
  /** The OAuth scope the action needs (../scopes.ts). */
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
  judge(args: z.output<I>, state: GuestState, ctx: ToolContext): Verdict | Promise<Verdict>;
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
  return defineTool({
    name: spec.name,
    scope: spec.scope,
    description: spec.description,
    input: spec.input,
    output,
    annotations: {
      title: spec.title,
      readOnlyHint: false,
      destructiveHint: spec.destructive,
      idempotentHint: spec.idempotent,
      openWorldHint: false,
    },
    dryRun: (args) => !(args as Args).confirm,
    ...(spec.policyFields ? { policyFields: spec.policyFields } : {}),
    ...(spec.judgedBy ? { judgedBy: spec.judgedBy } : {}),
    describeCall: (args) => requestRows(spec.request(args)),
    blastRadius: (args, ctx) => radiusOf(spec, args as Args, ctx.pve()),
    run: (raw, ctx) => runAction(spec, raw as Args, ctx),
  });
}

/** Reads the guest, judges the action, and previews, sends or reports it unchanged. */
async function runAction<I extends z.ZodObject>(
  spec: GuestActionSpec<I>,
  args: z.output<I> & ActionArgs,
  ctx: ToolContext,
) {
  const raw = args as z.output<I>;
  spec.precheck?.(raw);
  const pve = ctx.pve();
  const state = await readGuestState(pve, args);
  const label = guestLabel(args, state.name ?? undefined);
  const verdict = await spec.judge(raw, state, ctx);
  if (!verdict.ok)
    throw new ToolFailure('conflict', `${verdict.reason} Nothing was sent to Proxmox.`);
  const sent = spec.request(raw);
  const req = requestView(sent);
  const guest = { name: state.name, status: describeState(state), lock: state.lock };
  const details = verdict.ok === true && verdict.details ? { details: verdict.details } : {};
  if (verdict.ok === 'unchanged') {
    return {
      structured: { mode: 'unchanged' as const, guest, note: verdict.note },
      text: `${label} on ${args.node}: ${verdict.note} Nothing to do; nothing was sent to Proxmox.`,
    };
  }
  if (!args.confirm) {
    const next = nextStep(spec.name, spec.doing(raw));
    const radius = await radiusOf(spec, args, pve);
    return {
      structured: {
        mode: 'preview' as const,
        guest,
        request: req,
        note: verdict.note,
        ...details,
        blast_radius: radius as unknown as Record<string, unknown>,
        next_step: next,
      },
      text: [
        NOTHING_SENT,
        `${label} on ${args.node} is ${describeState(state)}. ${verdict.note}`,
        `Would send ${requestLine(sent)}.`,
        ...blastRadiusLines(radius, ctx.clock.now()),
        next,
      ].join('\n'),
    };
  }
  const upid = await sendWrite(
    pve,
    sent,
    sent.sync ? z.unknown().transform(() => null) : upidString,
    `The request to ${spec.doing(raw)} ${label} may or may not have reached Proxmox: check the guest (pve_get_vm_status) or its tasks before trying again.`,
  );
  const reported = { guest, request: req, note: verdict.note, ...details };
  if (upid === null) {
    return {
      structured: { mode: 'applied' as const, ...reported },
      text: `${label} on ${args.node}: done (${spec.doing(raw)}); Proxmox applied it at once.`,
    };
  }
  const task = args.wait ? await waitForTask(pve, upid, args.timeout_s * 1000) : undefined;
  const head = `${label} on ${args.node}: ${spec.doing(raw)} started, task ${upid}.`;
  return {
    structured: {
      mode: 'started' as const,
      ...reported,
      upid,
      ...(task ? { task: task.state } : {}),
    },
    text: task
      ? `${head} ${task.summary}`
      : `${head} Use wait: true to wait for it, or follow it with pve_get_task_status.`,
    isError: task?.state.succeeded === false,
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
