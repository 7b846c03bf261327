// A Proxmox simulator (a process of its own) and a fake identity provider, started together for
// a Worker (./per-worker.ts) or for a Node project's files (./setup/servers.ts). If either fails
// to start, the other is closed again and the failure is thrown.

import { type FakeIdp, startFakeIdp } from './fake-idp.ts';
import { type SimulatorProcess, startSimulatorProcess, TEST_TIMINGS } from './simulator-process.ts';

export interface TestServers {
  simulator: SimulatorProcess;
  idp: FakeIdp;
  close(): Promise<void>;
}

/** `holdsThisProcess`: as startSimulatorProcess's (false for a Worker's servers). */
export async function startServers(holdsThisProcess: boolean): Promise<TestServers> {
  const [sim, fake] = await Promise.allSettled([
    startSimulatorProcess({ ...TEST_TIMINGS, holdsThisProcess }),
    startFakeIdp(),
  ]);
  const started = [sim, fake].flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const close = async (): Promise<void> => {
    await Promise.all(started.map((server) => server.close()));
  };
  if (sim.status === 'rejected' || fake.status === 'rejected') {
    await close().catch(() => {}); // the failure to start is the error to see
    throw sim.status === 'rejected' ? sim.reason : (fake as PromiseRejectedResult).reason;
  }
  return { simulator: sim.value, idp: fake.value, close };
}
