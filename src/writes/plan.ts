// A write's steps and how they are sent. Every write tool's call is a plan of one or more steps,
// each one request, sent in order; a step that starts a task is waited for before the next. A
// plan stops at the first step that fails (or whose outcome is unknown), and its outcome says,
// step by step, what was done, what failed and why, and what was not done: never a silent half.
// The first step may create a guest under an id the server chose (./fresh-vmid.ts); a first
// step whose answer was lost ends the call `indeterminate`: it is never sent again.

import { z } from 'zod';
import { ToolFailure } from '../calls/tool-spec';
import type { FormParams, PveClient } from '../proxmox/client';
import { PveError, writeMayHaveHappened } from '../proxmox/errors';
import { upidString } from '../proxmox/schemas';
import { sendWithFreshId } from './fresh-vmid';
import { SECRET_PARAMS } from '../proxmox/secret-params';
import { requestLine, sendRequest, type WriteRequest } from './request';
import { SECRET_SHOWN, shownParams } from './shown-params';
import { type TaskOutcome, waitForTask } from './task-wait';

/**
 * What Proxmox answers a step with: `task`, a task id; `task?`, a task id or null (done at
 * once); `applied`, nothing to wait for (a container's config); a schema: data, read with it.
 */
type Answer = 'task' | 'task?' | 'applied' | z.ZodType;

/** One request of a plan. */
export interface WriteStep extends Omit<WriteRequest, 'params'> {
  params: FormParams;
  /**
   * The parameters as people read them, where they differ from those sent (a command's stdin as
   * text, which goes out as bytes); otherwise the parameters sent, secrets redacted.
   */
  view?: Record<string, string>;
  /** What it does, for texts: "start", "setting cloud-init on VM 106". */
  doing: string;
  /** For a plan of several: what holds once it succeeded ("VM 106 was cloned from VM 9000"). */
  done?: string;
  answer: Answer;
}

/** `started`: the last task, not waited for; `running`: still running when the time was up. */
type StepStatus = 'done' | 'started' | 'running' | 'failed' | 'unknown' | 'not_run';

export interface StepOutcome {
  step: WriteStep;
  status: StepStatus;
  upid?: string;
  /** The task's end, when it was waited for. */
  task?: TaskOutcome;
  /** What Proxmox answered a step read with a schema. */
  data?: unknown;
  message?: string;
}

/** The request of a step as people are shown it, secrets redacted. */
export function stepRequest(step: WriteStep): {
  method: string;
  path: string;
  params: Record<string, string>;
} {
  const params = shownParams(step.view ?? plainParams(step.params));
  return { method: step.method, path: step.path, params };
}

/** A step's parameters as text: a list as its items (`command.0`, ...), a secret redacted. */
function plainParams(params: FormParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (SECRET_PARAMS.has(k)) out[k] = SECRET_SHOWN;
    else if (Array.isArray(v)) for (const [i, item] of v.entries()) out[`${k}.${i}`] = item;
    else out[k] = typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
  }
  return out;
}

/** A step as results show it (its request as stepRequest shows it). */
export const stepOutput = z.object({
  doing: z.string(),
  request: z
    .object({ method: z.string(), path: z.string(), params: z.record(z.string(), z.string()) })
    .partial(),
  status: z.string().optional(),
  upid: z.string().optional(),
  message: z.string().optional(),
});

export function stepView(o: StepOutcome | WriteStep): z.input<typeof stepOutput> {
  const step = 'step' in o ? o.step : o;
  const request = stepRequest(step);
  if (!('step' in o)) return { doing: step.doing, request };
  return {
    doing: step.doing,
    request,
    status: o.status,
    ...(o.upid ? { upid: o.upid } : {}),
    ...(o.message ? { message: o.message } : {}),
  };
}

const isTask = (step: WriteStep) => step.answer === 'task' || step.answer === 'task?';

/** The requests as a preview writes them: one in a sentence, or numbered in order. */
export function planLines(steps: readonly WriteStep[], numbered = steps.length > 1): string[] {
  if (!numbered) return [`Would send ${requestLine(stepRequest(steps[0]!))}.`];
  return [
    'Would send, in order, each after the one before has ended:',
    ...steps.map(
      (s, i) =>
        `${i + 1}. ${requestLine(stepRequest(s))}: ${s.doing}${isTask(s) ? ' (a task, waited for)' : ''}`,
    ),
  ];
}

/**
 * The exact requests for approvers, one row per request and per parameter (secrets redacted):
 * one request as `request`, `vmid`, ...; numbered as `1.request`, `1.newid`, ... (never a bare
 * number as a key: objects list those first).
 */
export function describePlan(
  steps: readonly WriteStep[],
  numbered = steps.length > 1,
): Record<string, string> {
  const rows = steps.map((s) => {
    const r = stepRequest(s);
    return { request: `${r.method} ${r.path}`, ...shownParams(r.params) };
  });
  if (!numbered) return rows[0]!;
  const out: Record<string, string> = {};
  rows.forEach((row, i) => {
    for (const [k, v] of Object.entries(row)) out[`${i + 1}.${k}`] = v;
  });
  return out;
}

/** How a plan is sent. */
interface PlanRun {
  pve: PveClient;
  steps: readonly WriteStep[];
  /** The first step creates a guest under an id the server chose: on a clash, take the next. */
  freshId?: {
    vmid: number;
    idArg: string;
    /** The steps for another id. */
    rebuild(vmid: number): readonly WriteStep[];
    recheck(vmid: number): void;
  };
  /** What a lost answer to the first step may mean, and what to check. */
  lost(vmid: number | undefined): string;
  /** Whether a failure of the first step may have happened after Proxmox took it. */
  mayHaveHappened?: (err: PveError) => boolean;
  /** Proxmox's refusal of the first step in the tool's words (null: as Proxmox said it). */
  explain?: (err: PveError) => ToolFailure | null;
  /** How long to wait: for one step's task, from its answer on; for `steps`, all in all (ms). */
  timeoutMs: number;
  /** The steps share one deadline, counted from before the first was sent (a clone's plan). */
  sharedDeadline?: boolean;
  /** Wait for the last step's task too. */
  waitLast: boolean;
}

export interface PlanSent {
  /** The id the first step used, when the server chose it. */
  vmid?: number;
  /** POSTs of the first step (more than 1 when a chosen id was taken meanwhile). */
  attempts: number;
  outcomes: StepOutcome[];
}

/** Sends the plan; a first step that fails is thrown (nothing happened), later ones are reported. */
export async function runPlan(run: PlanRun): Promise<PlanSent> {
  const { pve } = run;
  const deadline = pve.clock.now() + run.timeoutMs;
  const sent = await sendFirst(run);
  const { steps } = sent;
  const outcomes: StepOutcome[] = [];
  let answer: unknown = sent.answer;
  for (let i = 0; i < steps.length; i++) {
    if (i > 0) {
      try {
        answer = await send(pve, steps[i]!);
      } catch (err) {
        outcomes.push(failed(steps[i]!, err));
        break;
      }
    }
    const outcome = await settleStep(run, steps[i]!, answer, i === steps.length - 1, deadline);
    outcomes.push(outcome);
    if (outcome.status !== 'done' && outcome.status !== 'started') break;
  }
  for (const step of steps.slice(outcomes.length)) outcomes.push({ step, status: 'not_run' });
  return {
    ...(sent.vmid === undefined ? {} : { vmid: sent.vmid }),
    attempts: sent.attempts,
    outcomes,
  };
}

/** The first step, under a fresh id when the server chose it; the steps for the id it used. */
async function sendFirst(
  run: PlanRun,
): Promise<{ vmid?: number; answer: unknown; attempts: number; steps: readonly WriteStep[] }> {
  const fresh = run.freshId;
  if (!fresh) {
    try {
      return { answer: await send(run.pve, run.steps[0]!), attempts: 1, steps: run.steps };
    } catch (err) {
      if (!(err instanceof PveError)) throw err;
      if ((run.mayHaveHappened ?? writeMayHaveHappened)(err))
        throw new ToolFailure('indeterminate', `${err.message} ${run.lost(undefined)}`);
      throw run.explain?.(err) ?? err;
    }
  }
  // Its sends' lost answers end the call there; a failed read of the next id is that read's.
  const sent = await sendWithFreshId({
    pve: run.pve,
    vmid: fresh.vmid,
    idArg: fresh.idArg,
    send: (id) => send(run.pve, (id === fresh.vmid ? run.steps : fresh.rebuild(id))[0]!),
    recheck: fresh.recheck,
    lost: run.lost,
  });
  const steps = sent.vmid === fresh.vmid ? run.steps : fresh.rebuild(sent.vmid);
  return { vmid: sent.vmid, answer: sent.result, attempts: sent.attempts, steps };
}

/** What became of a step Proxmox took: done at once, its task started, or waited for. */
async function settleStep(
  run: PlanRun,
  step: WriteStep,
  answer: unknown,
  last: boolean,
  deadline: number,
): Promise<StepOutcome> {
  if (!isTask(step) || answer === null) {
    return step.answer instanceof z.ZodType
      ? { step, status: 'done', data: answer }
      : { step, status: 'done' };
  }
  const upid = answer as string;
  if (last && !run.waitLast) return { step, status: 'started', upid };
  const ms = run.sharedDeadline ? Math.max(1, deadline - run.pve.clock.now()) : run.timeoutMs;
  const task = await waitForTask(run.pve, upid, ms);
  const state = task.state;
  const status: StepStatus =
    state.succeeded === true
      ? 'done'
      : state.succeeded === false
        ? 'failed'
        : state.status === 'running'
          ? 'running'
          : 'unknown';
  return { step, status, upid, task, ...(status === 'done' ? {} : { message: task.summary }) };
}

/** A later step that failed: what Proxmox said, or that it may have happened. */
function failed(step: WriteStep, err: unknown): StepOutcome {
  const lost = err instanceof PveError && writeMayHaveHappened(err);
  const message = err instanceof PveError ? err.message : 'unexpected error';
  return {
    step,
    status: lost ? 'unknown' : 'failed',
    message: lost ? `${message} It may or may not have happened.` : message,
  };
}

function send(pve: PveClient, step: WriteStep): Promise<unknown> {
  const schema =
    step.answer === 'task'
      ? upidString
      : step.answer === 'task?'
        ? upidString.nullable()
        : step.answer === 'applied'
          ? z.unknown().transform(() => null)
          : step.answer;
  return sendRequest(pve, step, schema);
}

/** Whether the plan did all it was asked to (the last task may still be running). */
export function completed(outcomes: readonly StepOutcome[]): boolean {
  return outcomes.every(
    (o, i) =>
      o.status === 'done' ||
      (i === outcomes.length - 1 && (o.status === 'started' || o.status === 'running')),
  );
}

/** "VM 106 was cloned from VM 9000; setting cloud-init on VM 106 failed: ... Not done: starting VM 106." */
export function summarize(outcomes: readonly StepOutcome[]): string {
  const parts: string[] = [];
  const done = outcomes.filter((o) => o.status === 'done').map((o) => o.step.done ?? o.step.doing);
  if (done.length) parts.push(`${done.join('; ')}.`);
  for (const o of outcomes) {
    if (o.status === 'started') parts.push(`${capital(o.step.doing)}: started, task ${o.upid}.`);
    if (o.status === 'running') parts.push(`${capital(o.step.doing)}: ${o.message}`);
    if (o.status === 'failed') parts.push(`${capital(o.step.doing)} failed: ${o.message}`);
    if (o.status === 'unknown')
      parts.push(`${capital(o.step.doing)}: outcome unknown: ${o.message}`);
  }
  const skipped = outcomes.filter((o) => o.status === 'not_run').map((o) => o.step.doing);
  if (skipped.length) parts.push(`Not done: ${skipped.join('; ')}.`);
  return parts.join(' ');
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
