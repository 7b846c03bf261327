// The workerd pool (@cloudflare/vitest-plugin's), with servers of its own for each Worker it
// starts: a Proxmox simulator (a process) and a fake identity provider, started as the Worker
// starts, their addresses handed to the project's options, and stopped when the Worker stops.
// The pool starts a Worker per pool worker, and again when the queue moves on from another
// project, so the servers follow the Workers: never more than run at once. The files one Worker
// runs take turns, so none takes another's next sign-in or fault; each begins from a seeded
// cluster (./worker/each-file.ts).

import { cloudflarePool } from '@cloudflare/vitest-plugin';
import type { Plugin } from 'vitest/config';
import { type FakeIdp, startFakeIdp } from './fake-idp.ts';
import { type SimulatorProcess, startSimulatorProcess, TEST_TIMINGS } from './simulator-process.ts';

/** A project's options function as the workerd pool takes it: `inject` in, its options out. */
type OptionsOf = Extract<Parameters<typeof cloudflarePool>[0], (...args: never[]) => unknown>;
type PoolContext = Parameters<OptionsOf>[0];
type WorkersPoolOptions = Awaited<ReturnType<OptionsOf>>;

/** The addresses of a Worker's own servers. */
export interface WorkerServers {
  simulatorUrl: string;
  fakeIdpUrl: string;
}

/**
 * Goes after `cloudflareTest(...)` in a project's plugins, and takes the place of its pool:
 * `options` gets the pool's context and the starting Worker's servers.
 */
export function serversPerWorker(
  options: (ctx: PoolContext, servers: WorkerServers) => WorkersPoolOptions,
): Plugin {
  return {
    name: 'servers-per-worker',
    configureVitest({ project }) {
      project.config.poolRunner = {
        name: 'cloudflare-pool',
        createPoolWorker(poolOptions) {
          let simulator: SimulatorProcess | undefined;
          let idp: FakeIdp | undefined;
          const close = async (): Promise<void> => {
            const ending = [simulator, idp];
            simulator = undefined;
            idp = undefined;
            await Promise.all(ending.map((server) => server?.close()));
          };
          const worker = cloudflarePool(async (ctx) => {
            const [sim, fake] = await Promise.allSettled([
              startSimulatorProcess({ ...TEST_TIMINGS, holdsThisProcess: false }),
              startFakeIdp(),
            ]);
            if (sim.status === 'fulfilled') simulator = sim.value;
            if (fake.status === 'fulfilled') idp = fake.value;
            if (!simulator || !idp) {
              await close(); // what did start; the failure to start is the error to see
              throw sim.status === 'rejected' ? sim.reason : (fake as PromiseRejectedResult).reason;
            }
            return options(ctx, { simulatorUrl: simulator.url, fakeIdpUrl: idp.url });
          }).createPoolWorker(poolOptions);
          const stop = worker.stop.bind(worker);
          worker.stop = async () => {
            try {
              await stop();
            } finally {
              await close();
            }
          };
          return worker;
        },
      };
    },
  };
}
