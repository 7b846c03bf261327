// The notification tests' policy: a stop announced to every receiver, a delete to the json one
// only, a config change to json, Slack and Teams (a rule's `notify` narrows the receivers).

export const NOTIFY_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_stop_vm: {
      action: 'require_approval',
      reason: 'Stopping a guest needs a person.',
    },
    pve_delete_vm: {
      action: 'require_approval',
      reason: 'Deleting a guest needs a lead.',
      notify: ['json'],
    },
    pve_set_vm_config: {
      action: 'require_approval',
      reason: 'Config changes need a person.',
      notify: ['json', 'slack', 'teams'],
    },
  },
};
