// CLI entry: `npm run simulator`. Env: SIM_PORT (8006), SIM_HOST (127.0.0.1),
// SIM_AUTH_DELAY_MS (3000), SIM_TASK_MS (1500). Prints one line, stops on SIGINT/SIGTERM, and with
// SIM_STOP_WITH_STDIN=1 also when its standard input ends: a program that starts it with a pipe
// there and never stops it (its own exit closes the pipe) does not leave it running.
import { SIMULATOR_TOKENS, startSimulator, type SimulatorOptions } from './server.ts';

function numberFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a number >= 0, got '${raw}'`);
  return value;
}

async function main(): Promise<void> {
  const options: SimulatorOptions = {
    port: numberFromEnv('SIM_PORT') ?? 8006,
    host: process.env.SIM_HOST || '127.0.0.1',
  };
  const authFailDelayMs = numberFromEnv('SIM_AUTH_DELAY_MS');
  const taskDurationMs = numberFromEnv('SIM_TASK_MS');
  if (authFailDelayMs !== undefined) options.authFailDelayMs = authFailDelayMs;
  if (taskDurationMs !== undefined) options.taskDurationMs = taskDurationMs;

  const sim = await startSimulator(options);
  const token = SIMULATOR_TOKENS.admin.id;
  console.log(`PVE simulator listening on ${sim.url} (API ${sim.url}/api2/json, token ${token})`);

  const stop = () => {
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (process.env.SIM_STOP_WITH_STDIN === '1') {
    process.stdin.once('end', stop);
    process.stdin.once('error', stop);
    process.stdin.resume();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
