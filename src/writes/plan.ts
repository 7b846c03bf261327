// A plan of Proxmox writes run in order, for tools that do several things in one call (clone,
// then set cloud-init, grow the disk, start). Each step is one request; a step that starts a
// task is waited for before the next. The preview lists every step; a run stops at the first
// step that fails (or whose outcome is unknown), and its outcome says, step by step, what was
// done, what failed and why, and what was not done: never a silent half.

import { z } from 'zod';
import { ToolFailure } from '../calls/tool-spec';
import type { PveClient } from '../proxmox/client';
import { PveError, writeMayHaveHappened } from '../proxmox/errors';
import { upidString } from '../proxmox/schemas';
import { sendWithFreshId } from './fresh-vmid';
import { requestLine, requestView, sendRequest, type WriteRequest } from './request';
import { shownParams } from './shown-params';
import { waitForTask } from './task-wait';

export interface PlanStep extends WriteRequest {
  /** What it does, for lists and failures: "setting cloud-init on VM 106". */
  doing: string;
  /** What holds once it succeeded: "VM 106 was cloned from VM 9000". */
  done: string;
  /** Proxmox answers with a task id; the task's end is waited for before the next step. */
  task: boolean;
}

/** `started`: the last task, not waited for; `running`: still running when the time was up. */
export type StepStatus = 'done' | 'started' | 'running' | 'failed' | 'unknown' | 'not_run';

export interface StepOutcome {
  step: PlanStep;
  status: StepStatus;
  upid?: string;
  message?: string;
}

/** A step as results show it (secrets redacted). */
export const stepOutput = z.object({
  doing: z.string(),
  request: z
    .object({ method: z.string(), path: z.string(), params: z.record(z.string(), z.string()) })
    .partial(),
  status: z.string().optional(),
  upid: z.string().optional(),
  message: z.string().optional(),
});

export function stepView(o: StepOutcome | PlanStep): z.input<typeof stepOutput> {
  const step = 'step' in o ? o.step : o;
  const request = requestView(step);
  if (!('step' in o)) return { doing: step.doing, request };
  return {
    doing: step.doing,
    request,
    status: o.status,
    ...(o.upid ? { upid: o.upid } : {}),
    ...(o.message ? { message: o.message } : {}),
  };
}

/** The numbered list of requests a preview shows. */
export function planLines(steps: readonly PlanStep[]): string[] {
  return steps.map(
    (s, i) => `${i + 1}. ${requestLine(s)}: ${s.doing}${s.task ? ' (a task, waited for)' : ''}`,
  );
}

/**
 * The exact requests for approvers, one row per request and per parameter (secrets redacted):
 * `1.request`, `1.newid`, ... (never a bare number as a key: objects list those first).
 */
export function describePlan(steps: readonly PlanStep[]): Record<string, string> {
  const out: Record<string, string> = {};
  steps.forEach((s, i) => {
    out[`${i + 1}.request`] = `${s.method} ${s.path}`;
    for (const [k, v] of Object.entries(shownParams(s.params))) out[`${i + 1}.${k}`] = v;
  });
  return out;
}

export interface PlanRun {
  pve: PveClient;
  /** The steps for a guest id (built again if the server had to take another id). */
  build(vmid: number): PlanStep[];
  vmid: number;
  /** The first step creates the guest under an id the server chose: take the next on a clash. */
  freshId?: { idArg: string; recheck(vmid: number): void; lost(vmid: number): string };
  /** When waiting must end (epoch ms). */
  deadline: number;
  /** Wait for the last step's task too. */
  waitLast: boolean;
}

/** Runs the plan; a first step that fails is thrown (nothing happened), later ones are reported. */
export async function runPlan(run: PlanRun): Promise<{ vmid: number; outcomes: StepOutcome[] }> {
  const { pve } = run;
  let vmid = run.vmid;
  let steps = run.build(vmid);
  const outcomes: StepOutcome[] = [];
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    let answer: string | null;
    try {
      if (i === 0 && run.freshId) {
        const fresh = run.freshId;
        const sent = await sendWithFreshId({
          pve,
          vmid,
          given: false,
          idArg: fresh.idArg,
          send: (id) => send(pve, run.build(id)[0]!),
          recheck: fresh.recheck,
          lost: fresh.lost,
        });
        vmid = sent.vmid;
        steps = run.build(vmid);
        answer = sent.result;
      } else {
        answer = await send(pve, step);
      }
    } catch (err) {
      if (i === 0 && !(err instanceof PveError && writeMayHaveHappened(err))) throw err;
      if (i === 0)
        throw new ToolFailure(
          'indeterminate',
          `${(err as PveError).message} The request for ${step.doing} may or may not have reached Proxmox: check before trying again.`,
        );
      const lost = err instanceof PveError && writeMayHaveHappened(err);
      const message = err instanceof PveError ? err.message : 'unexpected error';
      outcomes.push({
        step: steps[i]!,
        status: lost ? 'unknown' : 'failed',
        message: lost ? `${message} It may or may not have happened.` : message,
      });
      break;
    }
    const current = steps[i]!;
    const last = i === steps.length - 1;
    if (!current.task || answer === null) {
      outcomes.push({ step: current, status: 'done' });
      continue;
    }
    if (last && !run.waitLast) {
      outcomes.push({ step: current, status: 'started', upid: answer });
      continue;
    }
    const task = await waitForTask(pve, answer, Math.max(1, run.deadline - pve.clock.now()));
    const state = task.state;
    const status: StepStatus =
      state.succeeded === true
        ? 'done'
        : state.succeeded === false
          ? 'failed'
          : state.status === 'running'
            ? 'running'
            : 'unknown';
    outcomes.push({
      step: current,
      status,
      upid: answer,
      ...(status === 'done' ? {} : { message: task.summary }),
    });
    if (status !== 'done') break;
  }
  for (const step of steps.slice(outcomes.length)) outcomes.push({ step, status: 'not_run' });
  return { vmid, outcomes };
}

function send(pve: PveClient, step: PlanStep): Promise<string | null> {
  const schema = step.task ? upidString.nullable() : z.unknown().transform(() => null);
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
  const done = outcomes.filter((o) => o.status === 'done').map((o) => o.step.done);
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
