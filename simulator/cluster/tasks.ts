// Worker tasks as PVE's fork_worker runs them: a UPID at once, the work later. A worker that
// touches a guest waits for that guest's config lock (lock_config's flock), so tasks on one guest
// run one after another. `begin` runs when a task gets the lock (checks, locks in the config);
// what it returns is applied when the task ends. Nothing uses timers: settleTasks runs before
// every request and advances all tasks whose time has come.
import type { ClusterState, NodeState, Task } from './cluster-state.ts';
import { encodeUpid } from './upid.ts';

/** A task's log as the worker writes it; `warn` lines make the exit status "WARNINGS: n". */
export class TaskLog {
  readonly lines: string[] = [];
  warnings = 0;

  info(...lines: string[]): void {
    this.lines.push(...lines.flatMap((line) => line.split('\n')));
  }

  warn(line: string): void {
    this.warnings += 1;
    this.lines.push(`WARN: ${line}`);
  }
}

/** What a worker's start decided: fail with `error`, or `commit` when the task ends. */
export interface WorkPlan {
  readonly error?: string;
  /** Applied at the end (`now` is when the task ends); may throw WorkerDie to fail it then. */
  readonly commit?: (log: TaskLog, now: number) => void;
  /** Undoes `begin`'s locks when the task fails (including by an injected exit status). */
  readonly undo?: () => void;
}

/** A Perl `die` inside the worker: the task ends with this text as its exit status (any error
 * thrown by a worker does; this one marks the deliberate ones). */
export class WorkerDie extends Error {}

/** A worker's start, when it holds its guest's lock (`startedAt`, ms: the time PVE's worker reads). */
export type Work = (log: TaskLog, startedAt: number) => WorkPlan;

export interface TaskSpec {
  readonly node: NodeState;
  /** PVE task type (qmstart, vzcreate, qmigrate, ...) and id (usually the vmid). */
  readonly type: string;
  readonly id: string;
  readonly user: string;
  readonly now: number;
  readonly durationMs: number;
  /** The guest whose config lock serializes this task with others on it. */
  readonly vmid?: number;
  /** An injected `taskExitStatus` fault: the task ends so, whatever the work decided. */
  readonly forcedExitStatus?: string;
  readonly work: Work;
}

const isSuccess = (status: string) => status === 'OK' || /^WARNINGS: \d+$/.test(status);

function dieText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\n+$/, '');
}

/** Start a task; returns its UPID. */
export function spawnTask(state: ClusterState, spec: TaskSpec): string {
  const { node, now } = spec;
  const upid = encodeUpid({
    node: node.name,
    pid: 100_000 + Math.floor(Math.random() * 3_000_000),
    pstart: Math.floor((now - node.bootedAt) / 10) + Math.floor(Math.random() * 5_000),
    starttime: Math.floor(now / 1000),
    type: spec.type,
    id: spec.id,
    user: spec.user,
  });
  const busyUntil = spec.vmid === undefined ? now : guestBusyUntil(state, spec.vmid, now);
  const startsAt = Math.max(now, busyUntil);
  const log = new TaskLog();
  let plan: WorkPlan = {};
  const task: Task = {
    upid,
    node: node.name,
    ...(spec.vmid !== undefined ? { vmid: spec.vmid } : {}),
    startsAt,
    endsAt: startsAt + spec.durationMs,
    log: log.lines,
    exitStatus: '',
    begun: false,
    finished: false,
    begin: () => {
      try {
        plan = spec.work(log, task.startsAt);
      } catch (err) {
        plan = { error: dieText(err) };
      }
    },
    finish: () => {
      task.exitStatus = finishWork(plan, log, spec.forcedExitStatus, task.endsAt);
    },
    abort: () => {
      if (task.begun) plan.undo?.();
      task.exitStatus = 'received interrupt';
      log.lines.push('received interrupt', 'TASK ERROR: received interrupt');
    },
  };
  state.tasks.set(upid, task);
  if (startsAt <= now) {
    task.begun = true;
    task.begin();
  }
  return upid;
}

function finishWork(plan: WorkPlan, log: TaskLog, forced: string | undefined, now: number): string {
  let error = plan.error;
  if (error === undefined && (forced === undefined || isSuccess(forced))) {
    try {
      plan.commit?.(log, now);
    } catch (err) {
      // any die inside the worker ends the task with its text
      error = dieText(err);
    }
  }
  const status = forced ?? error ?? (log.warnings > 0 ? `WARNINGS: ${log.warnings}` : 'OK');
  if (!isSuccess(status)) plan.undo?.();
  log.lines.push(isSuccess(status) ? `TASK ${status}` : `TASK ERROR: ${status}`);
  return status;
}

/** When the last task queued on this guest ends (or `now` if none is). */
function guestBusyUntil(state: ClusterState, vmid: number, now: number): number {
  let until = now;
  for (const task of state.tasks.values()) {
    if (task.vmid === vmid && !task.finished) until = Math.max(until, task.endsAt);
  }
  return until;
}

/** Advance every task whose time is up, in the order they were started. */
export function settleTasks(state: ClusterState, now: number): void {
  for (const task of state.tasks.values()) {
    if (!task.begun && now >= task.startsAt) {
      task.begun = true;
      task.begin();
    }
    if (task.begun && !task.finished && now >= task.endsAt) {
      task.finished = true;
      task.finish();
    }
  }
}

/**
 * abort_guest_tasks: kill a guest's unfinished workers of one type (stop's overrule-shutdown).
 * Their work is undone; they end as a killed worker does. Returns their UPIDs.
 */
export function abortGuestTasks(state: ClusterState, vmid: number, type: string): string[] {
  const aborted: string[] = [];
  for (const task of state.tasks.values()) {
    if (task.vmid !== vmid || task.finished || decodeType(task.upid) !== type) continue;
    task.finished = true;
    task.abort();
    aborted.push(task.upid);
  }
  return aborted;
}

const decodeType = (upid: string) => upid.split(':')[5];
