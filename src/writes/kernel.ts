// The write kernel: every tool that changes something in Proxmox is defined here, by a plan. A
// write tool says what the call would do — `plan(args, ctx)`: it reads what it acts on, refuses
// what Proxmox would refuse or what makes no sense, and returns the steps (one request each) with
// what to say about them — and how to word the result once they were sent. The kernel owns the
// rest, the same way for every write: the preview (its first line, the requests as they would go,
// the next step), the approver's rows, the confirm gate, sending (the fresh-id retry, the
// indeterminate outcome of a lost answer, waiting for tasks). The preview, the approval page and
// the requests sent all come from the one plan's steps.

import type { z } from 'zod';
import {
  type BaseToolContext,
  defineTool,
  type ToolContext,
  type ToolFailure,
  type ToolSpec,
  type ToolSuccess,
} from '../calls/tool-spec';
import type { PveError } from '../proxmox/errors';
import {
  describePlan,
  type PlanSent,
  planLines,
  runPlan,
  stepRequest,
  stepView,
  type WriteStep,
} from './plan';
import { NOTHING_SENT, nextStep } from './preview';

/** What a plan reads with: the call's context, and the arguments the server filled in. */
export type PlanContext = BaseToolContext & { readonly filled: readonly string[] };

/** What a call would send, what its preview says about it, and what its result will need. */
export interface WritePlan<F = unknown> {
  /** The requests, in order: one for most tools, several for a clone. */
  steps: readonly WriteStep[];
  /** What the preview says before the requests: the state of what it acts on, what it means. */
  lead: readonly string[];
  /** What the preview says after them: what the call would hit. */
  after?: readonly string[];
  /** Members of the preview's structured result beside its mode, requests and next step. */
  shown?: Record<string, unknown>;
  /**
   * How the preview shows the requests: `request`, the one request; `steps`, each in order;
   * `params`, a creation's form parameters one per line (with `idNote` on the line before);
   * `none`: not at all (a command in a guest, which the lead says in words).
   */
  requestsAs: 'request' | 'steps' | 'params' | 'none';
  idNote?: string;
  /** The next step: the same call with confirm: true, to `doing` (and `also`: " and vmid: 106"). */
  next: { doing: string; also?: string };
  /** The preview's first line, when not "nothing was sent" (a command: "nothing was run"). */
  nothingYet?: string;
  /**
   * The first step creates a guest under the id the server chose: on a clash, the next. Its lost
   * answer is worded by `lost`; `mayHaveHappened` and `explain` apply to plans without it.
   */
  freshId?: { vmid: number; idArg: string; rebuild(vmid: number): readonly WriteStep[] };
  /** What a lost answer to the first step may mean, and what to check ("The request to ..."). */
  lost(vmid: number | undefined): string;
  /** Whether a failure of the first step may have happened after Proxmox took it. */
  mayHaveHappened?: (err: PveError) => boolean;
  /** Proxmox's refusal of the first step in the tool's words (null: as Proxmox said it). */
  explain?: (err: PveError) => ToolFailure | null;
  /** What the plan read and judged that the tool's result says again (the guest's state). */
  facts: F;
}

/** A call with nothing to send (the guest already is as asked): its result. */
export interface NothingToSend {
  unchanged: ToolSuccess<Record<string, unknown>>;
}

/** The arguments the kernel reads of every write tool's call. */
interface WriteArgs {
  confirm?: boolean;
  wait?: boolean;
  timeout_s?: number;
}

export interface WriteToolSpec<I extends z.ZodObject, O extends z.ZodObject, F>
  extends Omit<ToolSpec<I, O>, 'run' | 'describeCall' | 'dryRun' | 'annotations'> {
  /** The tool's title for people (its annotations: it writes, and only to Proxmox). */
  title: string;
  /** It may lose data or state (a hard stop, a restore over a guest, a raw request). */
  destructive: boolean;
  /** Repeating it has no further effect (a second stop finds the guest stopped). */
  idempotent: boolean;
  /** Reads what the call acts on and judges it: the steps, or why nothing is to be sent. */
  plan(args: z.output<I>, ctx: PlanContext): Promise<WritePlan<F> | NothingToSend>;
  /** The result once the steps were sent. */
  report(
    args: z.output<I>,
    plan: WritePlan<F>,
    sent: PlanSent,
    ctx: ToolContext,
  ): ToolSuccess<z.input<O>> | Promise<ToolSuccess<z.input<O>>>;
  /** A tool whose calls may also only read (the raw request's GET): which, and how they run. */
  read?: {
    is(args: z.output<I>): boolean;
    describe(args: z.output<I>): Record<string, string>;
    run(args: z.output<I>, ctx: ToolContext): Promise<ToolSuccess<z.input<O>>>;
  };
}

/** The tools made here: every tool that can change something (test/layers.node.test.ts). */
const WRITE_TOOLS = new WeakSet<ToolSpec>();

/** Whether the kernel made this tool, so that its writes are planned, previewed and sent here. */
export function madeByKernel(tool: ToolSpec): boolean {
  return WRITE_TOOLS.has(tool);
}

export function defineWriteTool<I extends z.ZodObject, O extends z.ZodObject, F>(
  spec: WriteToolSpec<I, O, F>,
): ToolSpec<I, O> {
  const { plan: planOf, report, read, title, destructive, idempotent, ...tool } = spec;
  const made = defineTool<I, O>({
    ...tool,
    annotations: {
      title,
      readOnlyHint: false,
      destructiveHint: destructive,
      idempotentHint: idempotent,
      openWorldHint: false,
    },
    dryRun: (args) => !read?.is(args) && !(args as WriteArgs).confirm,
    async describeCall(args, ctx) {
      if (read?.is(args)) return read.describe(args);
      const plan = await planOf(args, ctx);
      return 'unchanged' in plan ? null : describePlan(plan.steps, plan.requestsAs === 'steps');
    },
    async run(args, ctx) {
      if (read?.is(args)) return read.run(args, ctx);
      const plan = await planOf(args, ctx);
      if ('unchanged' in plan) return plan.unchanged as ToolSuccess<z.input<O>>;
      const w = args as WriteArgs;
      if (!w.confirm) {
        // Where the server reaches several clusters, the one the call would go to.
        const cluster = ctx.clusters.length > 1 ? (ctx.cluster ?? ctx.clusters[0]!) : null;
        return preview(spec.name, plan, cluster) as ToolSuccess<z.input<O>>;
      }
      // With an approval, only the requests the person was shown go out.
      ctx.checkApproved(describePlan(plan.steps, plan.requestsAs === 'steps'));
      const fresh = plan.freshId;
      const sent = await runPlan({
        pve: ctx.pve(),
        steps: plan.steps,
        ...(fresh
          ? {
              freshId: {
                ...fresh,
                recheck: (id: number) => ctx.recheck({ ...args, [fresh.idArg]: id }),
              },
            }
          : {}),
        lost: plan.lost,
        ...(plan.mayHaveHappened ? { mayHaveHappened: plan.mayHaveHappened } : {}),
        ...(plan.explain ? { explain: plan.explain } : {}),
        timeoutMs: (w.timeout_s ?? 0) * 1000,
        sharedDeadline: plan.requestsAs === 'steps',
        waitLast: w.wait ?? false,
      });
      return report(args, plan, sent, ctx);
    },
  });
  WRITE_TOOLS.add(made);
  return made;
}

/** What a write says before it is confirmed: nothing happened yet, what would, and how. */
function preview(
  tool: string,
  plan: WritePlan,
  cluster: string | null,
): ToolSuccess<Record<string, unknown>> {
  const next = nextStep(tool, plan.next.doing, plan.next.also);
  const first = plan.steps[0]!;
  const requests =
    plan.requestsAs === 'request'
      ? { request: stepRequest(first) }
      : plan.requestsAs === 'steps'
        ? { steps: plan.steps.map(stepView) }
        : plan.requestsAs === 'params'
          ? { params: stepRequest(first).params }
          : {};
  const lines =
    plan.requestsAs === 'none'
      ? []
      : plan.requestsAs === 'params'
        ? [
            `Would ${first.method} ${first.path}${plan.idNote ?? ''} with:`,
            ...Object.entries(stepRequest(first).params).map(([k, v]) => `  ${k}=${v}`),
          ]
        : planLines(plan.steps, plan.requestsAs === 'steps');
  return {
    structured: {
      mode: 'preview',
      ...(cluster ? { cluster } : {}),
      ...plan.shown,
      ...requests,
      next_step: next,
    },
    text: [
      plan.nothingYet ?? NOTHING_SENT,
      ...plan.lead,
      ...lines,
      ...(plan.after ?? []),
      next,
    ].join('\n'),
  };
}
