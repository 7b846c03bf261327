// Both MCP eras on one /mcp: a session-scoped limit (per grant for a 2026 client), a grant
// limit, and an approval asked in the conversation.

export const ERAS_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_list_vms: { limits: [{ counter: 'lists', window: 'hour', max: 2, scope: 'session' }] },
    pve_create_qemu_vm: {
      limits: [{ counter: 'creates', window: 'hour', max: 100, scope: 'grant' }],
    },
    pve_stop_vm: { action: 'require_approval', reason: 'A person confirms each hard stop.' },
    // For scopes (test/calls/scopes.signed-in.test.ts): a read and a power action the policy allows, and
    // a limit only for clients granted provisioning (a `scope:` principal).
    pve_get_vm_status: {},
    pve_start_vm: {
      limits: [
        {
          counter: 'starts_by_provisioners',
          window: 'hour',
          max: 0,
          scope: 'grant',
          principals: ['scope:pve:provision'],
          reason: 'Clients that may provision do not start guests.',
        },
      ],
    },
  },
};
