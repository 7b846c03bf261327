// What a simulated guest program returns, and the helpers the program modules share: a finished
// result, a coreutils-style usage error, the glib spawn failure, and date pieces.
import type { Guest } from './cluster-state.ts';

export interface ExecResult {
  readonly out: Buffer;
  readonly err: Buffer;
  readonly exitcode: number;
  /** How long it runs (ms); undefined: it never ends by itself. */
  readonly durationMs: number | undefined;
}

export interface ExecEnv {
  readonly guest: Guest;
  readonly now: number;
  /** input-data, the process's stdin. */
  readonly input: Buffer;
}

/** qemu-ga's guest-exec could not start the program (g_spawn_async_with_pipes failed). */
export class SpawnError extends Error {}

/** Output beyond this is not generated (qemu-ga keeps 16 MiB anyway). */
export const GENERATE_LIMIT = 16 * 1024 * 1024 + 1;

export const done = (
  out: string | Buffer,
  exitcode = 0,
  err: string | Buffer = '',
): ExecResult => ({
  out: typeof out === 'string' ? Buffer.from(out) : out,
  err: typeof err === 'string' ? Buffer.from(err) : err,
  exitcode,
  durationMs: 0,
});
export const fail = (prog: string, message: string, exitcode = 1, help = true) =>
  done(
    '',
    exitcode,
    `${prog}: ${message}\n${help ? `Try '${prog} --help' for more information.\n` : ''}`,
  );

export const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
export const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
export const two = (n: number) => String(n).padStart(2, '0');
