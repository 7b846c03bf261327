// Arguments of pve_create_qemu_vm, validated to Proxmox's own formats, and the exact form
// parameters they become. Property strings are parsed key by key and re-printed canonically,
// so no value can carry another parameter or key to Proxmox.

import { z } from 'zod';
import {
  SCSI_FORMAT,
  parseAgent,
  parseBoot,
  parseCdrom,
  parseCpu,
  parseDrive,
  parseNet,
  type PropertyValue,
  QEMU_OSTYPES,
  QEMU_SCSI_HARDWARE,
} from '../../proxmox/qemu-options';
import { confirm, nodeName, waitArgs } from '../common';
import {
  cpuCores,
  description,
  dnsName,
  formParams,
  memoryMib,
  optionalVmid,
  poolId,
  propertyString,
  tags,
} from '../input-formats';

export const createInput = z.strictObject({
  node: nodeName.describe('Node, e.g. pve1.'),
  vmid: optionalVmid.describe('Omitted: the next free id.'),
  name: dnsName.optional().describe('A DNS name, e.g. web-01.'),
  memory: memoryMib.optional().describe('MiB (default 512).'),
  cores: cpuCores.optional().describe('Per socket (default 1).'),
  sockets: z.number().int().min(1).max(16).optional().describe('CPU sockets (default 1).'),
  net0: propertyString(parseNet, 'virtio,bridge=vmbr0')
    .optional()
    .describe('e.g. virtio,bridge=vmbr0,firewall=1.'),
  scsi0: propertyString((t) => parseDrive(t, SCSI_FORMAT), 'local-lvm:32,iothread=1')
    .optional()
    .describe('New disk STORAGE:SIZE_GiB, e.g. local-lvm:32,discard=on.'),
  ide2: propertyString(parseCdrom, 'local:iso/debian-12.iso,media=cdrom')
    .optional()
    .describe('CD-ROM: an ISO (local:iso/NAME.iso) or none.'),
  ostype: z.enum(QEMU_OSTYPES).optional().describe('e.g. l26 (Linux), win11.'),
  cpu: propertyString(parseCpu, 'host').optional().describe('e.g. host, x86-64-v2-AES.'),
  scsihw: z.enum(QEMU_SCSI_HARDWARE).optional().describe('SCSI controller.'),
  boot: propertyString(parseBoot, 'order=scsi0;ide2;net0')
    .optional()
    .describe('e.g. order=scsi0;ide2;net0.'),
  agent: z
    .union([z.boolean(), z.string().min(1).max(256)])
    .transform((value, ctx): PropertyValue => {
      const result = parseAgent(typeof value === 'boolean' ? (value ? '1' : '0') : value.trim());
      if (result.ok) return result.value;
      ctx.addIssue({ code: 'custom', message: `${result.error} (e.g. 1,fstrim_cloned_disks=1)` });
      return z.NEVER;
    })
    .optional()
    .describe('true/false or e.g. 1,fstrim_cloned_disks=1.'),
  tags: tags.optional().describe('A list, or separated by ";".'),
  pool: poolId.optional().describe('Resource pool, e.g. lab.'),
  start: z.boolean().optional().describe('Start it once created.'),
  description: description.optional().describe('Notes.'),
  ...waitArgs,
  confirm,
});
export type CreateArgs = z.output<typeof createInput>;

/** The form parameters for POST /nodes/{node}/qemu, except vmid (which may come from nextid). */
export function createParams(args: CreateArgs): Record<string, string> {
  return formParams({
    name: args.name,
    memory: args.memory,
    cores: args.cores,
    sockets: args.sockets,
    net0: args.net0,
    scsi0: args.scsi0,
    ide2: args.ide2,
    ostype: args.ostype,
    cpu: args.cpu,
    scsihw: args.scsihw,
    boot: args.boot,
    agent: args.agent,
    tags: args.tags?.length ? args.tags.join(';') : undefined,
    pool: args.pool,
    start: args.start,
    description: args.description,
  });
}
