// A Proxmox simulator (a process of its own) and a fake identity provider, shared by a Node
// project's files, which take turns (the fake IdP's next sign-in is one queue): their addresses
// as `simulatorUrl` and `fakeIdpUrl`. A workerd project's Workers each start their own instead
// (test/support/per-worker.ts).

import type { TestProject } from 'vitest/node';
import { startServers } from '../servers.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const servers = await startServers(true);
  project.provide('simulatorUrl', servers.simulator.url);
  project.provide('fakeIdpUrl', servers.idp.url);
  return () => servers.close();
}
