// qemu-ga's guest-exec process table (qga/commands.c): guest-exec starts a program and answers its
// pid; guest-exec-status reports `exited: false` until it ends, then its exit code (or signal)
// and output, base64-encoded and capped at 16 MiB per stream (GUEST_EXEC_MAX_OUTPUT, with
// out-truncated/err-truncated), and forgets the pid once that final status has been read. The
// table lives as long as the agent: a restarted VM starts with an empty one.
import type { AgentExecTable, AgentProcess, Guest } from './cluster-state.ts';
import { runProgram } from './guest-programs.ts';

/** GUEST_EXEC_MAX_OUTPUT: what qemu-ga keeps of each output stream. */
export const GUEST_EXEC_MAX_OUTPUT = 16 * 1024 * 1024;

function table(guest: Guest): AgentExecTable {
  const boot = guest.bootedAt ?? 0;
  if (!guest.agentExec || guest.agentExec.boot !== boot) {
    // the first pids a freshly booted Linux hands out after its services started
    guest.agentExec = { boot, nextPid: 1400 + ((guest.vmid * 131) % 900), processes: new Map() };
  }
  return guest.agentExec;
}

const cap = (data: Buffer) =>
  data.length > GUEST_EXEC_MAX_OUTPUT ? data.subarray(0, GUEST_EXEC_MAX_OUTPUT) : data;

/** guest-exec: start the program; returns its pid. Throws SpawnError if it cannot start. */
export function startProcess(
  guest: Guest,
  argv: readonly string[],
  input: Buffer,
  now: number,
): number {
  const result = runProgram(argv, { guest, now, input });
  const processes = table(guest);
  const pid = processes.nextPid;
  processes.nextPid += 1 + (argv.length % 2);
  const proc: AgentProcess = {
    pid,
    endsAt: result.durationMs === undefined ? undefined : now + result.durationMs,
    exitcode: result.exitcode,
    out: cap(result.out),
    err: cap(result.err),
    outTruncated: result.out.length > GUEST_EXEC_MAX_OUTPUT,
    errTruncated: result.err.length > GUEST_EXEC_MAX_OUTPUT,
  };
  processes.processes.set(pid, proc);
  return pid;
}

export type ExecStatus =
  | { readonly exited: false }
  | ({ readonly exited: true } & Pick<
      AgentProcess,
      'exitcode' | 'signal' | 'out' | 'err' | 'outTruncated' | 'errTruncated'
    >);

/** guest-exec-status: undefined for an unknown pid; a finished process is forgotten. */
export function processStatus(guest: Guest, pid: number, now: number): ExecStatus | undefined {
  const processes = table(guest).processes;
  const proc = processes.get(pid);
  if (!proc) return undefined;
  if (proc.endsAt === undefined || now < proc.endsAt) return { exited: false };
  processes.delete(pid);
  return {
    exited: true,
    ...(proc.signal !== undefined ? { signal: proc.signal } : { exitcode: proc.exitcode ?? 0 }),
    out: proc.out,
    err: proc.err,
    outTruncated: proc.outTruncated,
    errTruncated: proc.errTruncated,
  };
}
