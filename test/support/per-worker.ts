// The workerd pool (@cloudflare/vitest-plugin's), with servers of its own for each Worker it
// starts: a Proxmox simulator (a process) and a fake identity provider, started as the Worker
// starts, their addresses handed to the project's options, and stopped when the Worker stops.
// The pool starts a Worker per pool worker, and again when the queue moves on from another
// project, so the servers follow the Workers: never more than run at once. The files one Worker
// runs take turns, so none takes another's next sign-in or fault; each begins from a seeded
// cluster (./worker/each-file.ts).

import { cloudflarePool } from '@cloudflare/vitest-plugin';
import type { Plugin } from 'vitest/config';
import { startServers, type TestServers } from './servers.ts';

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
          let servers: TestServers | undefined;
          const worker = cloudflarePool(async (ctx) => {
            servers = await startServers(false);
            return options(ctx, {
              simulatorUrl: servers.simulator.url,
              fakeIdpUrl: servers.idp.url,
            });
          }).createPoolWorker(poolOptions);
          const stop = worker.stop.bind(worker);
          worker.stop = async () => {
            try {
              await stop();
            } finally {
              const ending = servers;
              servers = undefined;
              await ending?.close();
            }
          };
          return worker;
        },
      };
    },
  };
}
