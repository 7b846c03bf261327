// The POLICY the signed-in project deploys (vitest.config.ts imports it), which the lifecycle
// tests read as version 1 (the project's other files put their own in force): lists and
// starts are open, a stop needs a person's approval, deleting is refused, the rest is denied.

export const DEPLOYED = {
  version: '1',
  default: 'deny',
  tools: {
    pve_list_vms: {},
    pve_start_vm: {},
    pve_stop_vm: { action: 'require_approval' },
    pve_delete_vm: { action: 'deny', reason: 'Deleting is for people.' },
  },
};
