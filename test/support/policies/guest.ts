// Inside guests and their backups: an allow-list of programs of its own (the shipped one is
// tested in test/policy/guest-exec.test.ts and test/policy/bundled.worker.test.ts), service changes for ops
// only; restores need a lead.

import SHIPPED from '../../../policy.json';

export const GUEST_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_guest_info: {},
    pve_guest_file_read: SHIPPED.tools.pve_guest_file_read,
    pve_guest_exec: {
      sensitive: ['input_data'],
      deny_if: [
        {
          path: 'args.command.1',
          op: 'in',
          value: ['restart', 'stop', 'start', 'reload'],
          except: ['group:ops'],
          reason: 'Only ops change services.',
        },
      ],
      require: [
        {
          path: 'args.command.0',
          op: 'in',
          value: ['echo', 'hostname', 'systemctl', 'df', 'seq', 'cat', 'sleep', 'false', 'uname'],
          reason: 'Only these programs.',
        },
      ],
    },
    pve_list_backups: {},
    pve_create_backup: {},
    pve_delete_backup: {},
    pve_shutdown_vm: {},
    pve_restore_backup: {
      action: 'require_approval',
      approvers: ['group:leads'],
      reason: 'A restore needs a lead.',
    },
  },
};
