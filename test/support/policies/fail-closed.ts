// The fail-closed tests' policy: no `default` (so deny), a require on an argument calls may
// leave out, vmid bounds the server-chosen vmid must meet, a grant-scoped limit (its counter
// object can be hung), and a tool that needs approval (so can its approvals object).

export const FAIL_CLOSED_POLICY = {
  version: '1',
  tools: {
    pve_create_qemu_vm: {
      deny_if: [
        { path: 'args.vmid', op: 'lt', value: 1000, reason: 'Agent VMs take ids from 1000 up.' },
        { path: 'args.vmid', op: 'gt', value: 5000, reason: 'Agent VMs take ids up to 5000.' },
      ],
      require: [{ path: 'args.pool', op: 'eq', value: 'lab' }],
      sensitive: ['description'],
    },
    pve_list_vms: { limits: [{ counter: 'lists', window: 'hour', max: 1000, scope: 'grant' }] },
    pve_stop_vm: { action: 'require_approval', reason: 'A person confirms each hard stop.' },
    pve_get_task_status: {},
  },
};
