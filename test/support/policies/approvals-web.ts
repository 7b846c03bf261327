// Creating a VM needs a person's approval on the approval page (never asked in the conversation).

export const APPROVALS_WEB_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_create_qemu_vm: {
      action: 'require_approval',
      approval: 'web',
      reason: 'A person approves new VMs on the approval page.',
    },
  },
};
