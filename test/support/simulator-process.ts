// The Proxmox simulator in a process of its own (simulator/main.ts, as `npm run simulator` runs
// it): vitest's main process also runs the reporters, the fake identity provider and the
// receivers, and a busy main process must not delay Proxmox's answers past the Worker's 2 s
// deadline. A free port picked by the simulator itself (SIM_PORT=0), read back from its ready
// line. Stopped by `close()` with its whole tree, and in any case when this process ends: its
// standard input is a pipe from here (SIM_STOP_WITH_STDIN), which closes with this process
// however it ends.
//
// Two kinds of caller: a global setup (test/support/setup/servers.ts), which closes it in its
// teardown, and test/support/per-worker.ts, which gives each Worker the workerd pool starts a
// simulator of its own, closed when that Worker stops.

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
   * Whether the simulator, while it runs, keeps this process from ending (the default). A
   * per-Worker simulator does not: vitest's main process may end while one is being closed.
   */
  holdsThisProcess?: boolean;
}): Promise<SimulatorProcess> {
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
        SIM_STOP_WITH_STDIN: '1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...OWN_GROUP,
    },
  );
  let output = '';
  let ready = false;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`simulator not ready in 30 s: ${output}`)),
      30_000,
    );
    const seen = (chunk: Buffer): void => {
      output += chunk.toString();
      const line = READY.exec(output);
      if (!line) return;
      clearTimeout(timer);
      ready = true;
      // From here on its output is only drained; what it prints on an error still shows.
      output = '';
      resolve(line[1]!);
    };
    child.stdout!.on('data', (chunk: Buffer) => (ready ? undefined : seen(chunk)));
    child.stderr!.on('data', (chunk: Buffer) =>
      ready ? process.stderr.write(chunk) : seen(chunk),
    );
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`simulator exited (${code}) before it was ready: ${output}`));
    });
  }).catch(async (err: unknown) => {
    await endTree(child);
    throw err;
  });
  let closing = false;
  child.once('exit', (code, signal) => {
    if (!closing)
      process.stderr.write(`simulator at ${url} ended on its own (${signal ?? code})\n`);
  });
  if (options.holdsThisProcess === false) {
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
  return {
    url,
    close: () => {
      closing = true;
      return endTree(child);
    },
  };
}
