// The approvals tests' policy: which tools need a person's approval, from whom, and how many.

export const APPROVALS_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_create_qemu_vm: {
      action: 'require_approval',
      reason: "Creating VMs needs a person's OK.",
      sensitive: ['description'],
    },
    pve_list_vms: {
      action: 'require_approval',
      approvers: ['group:approvers'],
      reason: 'Listing needs an approver.',
    },
    pve_clone_vm: {
      action: 'require_approval',
      approvers: ['group:leads'],
      reason: "New VMs need a team lead's OK.",
    },
    pve_set_vm_config: {
      action: 'require_approval',
      reason: "Config changes need a person's OK.",
    },
    pve_delete_vm: {
      action: 'require_approval',
      approvers: ['group:leads'],
      approvals_required: 2,
      reason: 'Deleting a guest needs two leads.',
    },
    pve_rollback_snapshot: {
      action: 'require_approval',
      approvers: ['group:leads'],
      reason: 'Rolling a guest back needs a lead.',
    },
    pve_guest_exec: {
      action: 'require_approval',
      approvers: ['group:leads'],
      reason: 'A command in a guest needs a lead.',
      sensitive: ['input_data'],
    },
    pve_api_request: {
      action: 'require_approval',
      reason: "Raw API writes need a person's OK.",
      sensitive: ['params.site-secret'],
    },
  },
};
