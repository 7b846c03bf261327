// Every process's command line, as any local user reads them with `ps`: the place a secret
// passed as an argument would leak. `ps -A -ww -o args=` means the same to procps (Linux) and
// BSD ps (macOS): all processes, no width limit, no header. Windows has no `ps` (its command
// lines come from a CIM query), so the tests that read them do not run there.

import { execFileSync } from 'node:child_process';
import { IS_WINDOWS } from '../../scripts/processes.ts';

/** Why the command-line tests do not run on this machine, or null when they do. */
export const NO_COMMAND_LINES = IS_WINDOWS
  ? 'Windows has no ps: process command lines are read there through a CIM query, not tested'
  : null;

/** One line per process: its program and arguments. */
export function commandLines(): string {
  return execFileSync('ps', ['-A', '-ww', '-o', 'args='], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
}
