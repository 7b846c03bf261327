// One Proxmox simulator, in a process of its own, shared by a Node project's files (they run one
// at a time): its address as `simulatorUrl`. The workerd projects start one per Worker instead
// (vitest.config.ts).

import type { TestProject } from 'vitest/node';
import { startSimulatorProcess, TEST_TIMINGS } from '../simulator-process.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const sim = await startSimulatorProcess(TEST_TIMINGS);
  project.provide('simulatorUrl', sim.url);
  return () => sim.close();
}
