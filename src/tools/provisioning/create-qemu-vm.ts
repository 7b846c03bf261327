// pve_create_qemu_vm: previews by default; with confirm=true sends one POST /nodes/{node}/qemu
// (see ../../writes/guest-create.ts for the vmid and the task), its arguments as create-input.ts
// checks them.

import {
  AGENT_FORMAT,
  BOOT_FORMAT,
  CPU_FORMAT,
  DRIVE_DERIVED_FIELDS,
  IDE_FORMAT,
  NET_FORMAT,
  SCSI_FORMAT,
  fieldsOf,
} from '../../proxmox/qemu-options';
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
  policyFields: {
    net0: fieldsOf(NET_FORMAT),
    scsi0: fieldsOf(SCSI_FORMAT, DRIVE_DERIVED_FIELDS),
    ide2: fieldsOf(IDE_FORMAT, DRIVE_DERIVED_FIELDS),
    cpu: fieldsOf(CPU_FORMAT),
    boot: fieldsOf(BOOT_FORMAT),
    agent: fieldsOf(AGENT_FORMAT),
  },
  params: createParams,
  guestName: (args) => args.name,
});
