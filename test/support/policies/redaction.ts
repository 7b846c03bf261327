// Every tool that takes a sensitive value needs a person's approval, announced to every receiver:
// the marker test (test/secrets/sensitive-values.redaction.test.ts) follows each value through every place it could go.

export const REDACTION_POLICY = {
  version: '1',
  default: 'deny',
  tools: Object.fromEntries(
    (
      [
        ['pve_create_qemu_vm', ['description']],
        ['pve_clone_vm', ['description']],
        ['pve_create_lxc', ['password']],
        ['pve_set_vm_config', ['config.description']],
        ['pve_create_snapshot', ['description']],
        ['pve_create_backup', ['notes']],
        ['pve_guest_exec', ['command', 'input_data']],
        ['pve_guest_file_read', ['file']],
        ['pve_api_request', ['params.site-secret']],
      ] as const
    ).map(([tool, sensitive]) => [
      tool,
      {
        action: 'require_approval',
        reason: 'A person approves this.',
        sensitive,
        notify: ['json', 'slack', 'teams'],
      },
    ]),
  ),
};
