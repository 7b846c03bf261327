// The Proxmox simulator in a process of its own (simulator/main.ts, as `npm run simulator` runs
// it), for the tests' global setups: vitest's main process also runs the reporters, the fake
// identity provider and the receivers, and a busy main process must not delay Proxmox's answers
// past the Worker's 2 s deadline. A free port picked by the simulator itself (SIM_PORT=0), read
// back from its ready line; stopped with its whole tree.

import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { endTree, OWN_GROUP } from '../../scripts/processes.ts';

const root = path.resolve(import.meta.dirname, '../..');
const READY = /^PVE simulator listening on (http:\/\/\S+) /m;

export interface SimulatorProcess {
  url: string;
  close(): Promise<void>;
}

/** The simulator's timings for tests: a refused token answers in 200 ms, a task runs 300 ms. */
export const TEST_TIMINGS = { authFailDelayMs: 200, taskDurationMs: 300 } as const;

export async function startSimulatorProcess(options: {
  authFailDelayMs: number;
  taskDurationMs: number;
  /**
   * Started by a caller with no teardown of its own (vitest.config.ts's per-Worker options): the
   * simulator stops when this process ends (its standard input, a pipe from here, closes), and
   * does not keep this process running meanwhile.
   */
  endsWithThisProcess?: boolean;
}): Promise<SimulatorProcess> {
  const tied = options.endsWithThisProcess === true;
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'simulator/main.ts')],
    {
      cwd: root,
      env: {
        ...process.env,
        SIM_PORT: '0',
        SIM_HOST: '127.0.0.1',
        SIM_AUTH_DELAY_MS: String(options.authFailDelayMs),
        SIM_TASK_MS: String(options.taskDurationMs),
        ...(tied ? { SIM_STOP_WITH_STDIN: '1' } : {}),
      },
      stdio: [tied ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      ...OWN_GROUP,
    },
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`simulator not ready in 30 s: ${output}`)),
      30_000,
    );
    const seen = (chunk: Buffer): void => {
      output += chunk.toString();
      const ready = READY.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`simulator exited (${code}) before it was ready: ${output}`));
    });
  }).catch(async (err: unknown) => {
    await endTree(child);
    throw err;
  });
  if (tied) {
    // Nothing of the child holds this process open: not the child, not its three pipes.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
  return { url, close: () => endTree(child) };
}
