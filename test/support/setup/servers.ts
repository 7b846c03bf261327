// A Proxmox simulator (a process of its own) and a fake identity provider, shared by a Node
// project's files, which take turns (the fake IdP's next sign-in is one queue): their addresses
// as `simulatorUrl` and `fakeIdpUrl`. A workerd project's Workers each start their own instead
// (test/support/per-worker.ts).

import type { TestProject } from 'vitest/node';
import { startFakeIdp } from '../fake-idp.ts';
import { startSimulatorProcess, TEST_TIMINGS } from '../simulator-process.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = await Promise.allSettled([startSimulatorProcess(TEST_TIMINGS), startFakeIdp()]);
  const close = () =>
    Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.close() : undefined)));
  const [sim, idp] = started;
  if (sim.status === 'rejected' || idp.status === 'rejected') {
    await close().catch(() => {}); // the setup's own error is the one to see
    throw sim.status === 'rejected' ? sim.reason : (idp as PromiseRejectedResult).reason;
  }
  project.provide('simulatorUrl', sim.value.url);
  project.provide('fakeIdpUrl', idp.value.url);
  return async () => {
    await close();
  };
}
