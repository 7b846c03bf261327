// Polls a Proxmox task until it stops or a deadline passes. A failure while polling is reported
// in the outcome, not thrown: the task was started, so the call must not look retryable.

import type { PveClient } from '../proxmox/client';
import { PveError } from '../proxmox/errors';
import { taskStatus } from '../proxmox/schemas';
import { parseUpid, taskSucceeded } from '../proxmox/upid';

export interface TaskOutcome {
  state: { status: string; exitstatus: string | null; succeeded: boolean | null };
  summary: string;
}

const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 2000;

export async function waitForTask(
  pve: PveClient,
  upid: string,
  timeoutMs: number,
): Promise<TaskOutcome> {
  const parsed = parseUpid(upid);
  if (!parsed) {
    return {
      state: { status: 'unknown', exitstatus: null, succeeded: null },
      summary: 'Proxmox returned a task id that cannot be polled.',
    };
  }
  const path = `/nodes/${encodeURIComponent(parsed.node)}/tasks/${encodeURIComponent(upid)}/status`;
  const deadline = pve.clock.now() + timeoutMs;
  let delay = FIRST_POLL_MS;
  for (;;) {
    let status;
    try {
      // Each poll gets only what is left of timeout_s: a slow answer never stretches the wait.
      status = await pve.get(
        path,
        taskStatus,
        {},
        { timeoutMs: Math.max(1, deadline - pve.clock.now()) },
      );
    } catch (err) {
      if (
        err instanceof PveError &&
        err.failure.kind === 'timeout' &&
        pve.clock.now() >= deadline - 5
      ) {
        return {
          state: { status: 'unknown', exitstatus: null, succeeded: null },
          summary: `The task was started; its status did not come back within ${Math.round(timeoutMs / 1000)} s. Check it again later.`,
        };
      }
      const why = err instanceof PveError ? err.message : 'unexpected error';
      return {
        state: { status: 'unknown', exitstatus: null, succeeded: null },
        summary: `The task was started, but its status could not be read: ${why} Do not start it again: check it with pve_get_task_status.`,
      };
    }
    if (status.status === 'stopped') {
      const ok = taskSucceeded(status.exitstatus);
      const exit = status.exitstatus ?? null;
      return {
        state: { status: 'stopped', exitstatus: exit, succeeded: ok },
        summary: ok
          ? `The task finished: ${exit}.`
          : `The task failed: ${exit ?? 'no exit status'}.`,
      };
    }
    const left = deadline - pve.clock.now();
    if (left <= 0) {
      return {
        state: { status: status.status, exitstatus: null, succeeded: null },
        summary: `The task is still ${status.status} after ${Math.round(timeoutMs / 1000)} s; follow it with pve_get_task_status.`,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}
