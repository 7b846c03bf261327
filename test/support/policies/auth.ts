// The auth tests' policy: listing limited per person (3 an hour) and per grant (2), creating
// allowed, everything else denied.

export const PER_USER_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_list_vms: {
      limits: [
        { counter: 'per_user', window: 'hour', max: 3, scope: 'user' },
        { counter: 'per_grant', window: 'hour', max: 2, scope: 'grant' },
      ],
    },
    pve_create_qemu_vm: {},
  },
};
