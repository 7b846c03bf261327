// pve_create_qemu_vm: previews by default; with confirm=true sends one POST /nodes/{node}/qemu
// (see ../../writes/guest-create.ts for the vmid and the task), its arguments as create-input.ts
// checks them.

import { keyFields } from '../../proxmox/config-keys';
import { createInput, createParams } from './create-input';
import { defineCreateTool } from '../../writes/guest-create';

export const createQemuVm = defineCreateTool({
  name: 'pve_create_qemu_vm',
  kind: 'qemu',
  title: 'Create a QEMU VM',
  description:
    // The seeds' words first (the tool definition PolicyLayer's record is written from).
    'Create a QEMU VM. Requires confirm=true. The preview gives the exact parameters and vmid ' +
    '(the next free one when left out). Disks STORAGE:SIZE_GiB (scsi0=local-lvm:32), NICs ' +
    'net0=virtio,bridge=vmbr0, an installer ISO on ide2 (local:iso/NAME.iso).',
  input: createInput,
  // The fields of each property-string argument, as the config key table has them.
  policyFields: Object.fromEntries(
    ['net0', 'scsi0', 'ide2', 'cpu', 'boot', 'agent'].map((key) => [key, keyFields('qemu', key)]),
  ),
  params: createParams,
  guestName: (args) => args.name,
});
