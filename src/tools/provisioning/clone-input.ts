// Arguments of pve_clone_vm (PLG's, plus pool, description, cloud-init, cores, memory, a NIC,
// a resize of the boot disk and start) and the plan of requests they become: the clone, then
// one config write, the resize, the start, each on the node the clone ends up on.

import { z } from 'zod';
import {
  CIUSER_RE,
  parseIpconfig,
  parseSearchDomains,
  encodeSshKeysForVm,
} from '../../proxmox/cloud-init';
import { parseResizeSize } from '../../proxmox/disk-size';
import { parseAddressList } from '../../proxmox/net-address';
import { parseNet } from '../../proxmox/qemu-options';
import { confirm, nodeName, storageId, vmid, waitArgs } from '../common';
import type { WriteStep } from '../../writes/plan';
import {
  cpuCores,
  description,
  dnsName,
  formParams,
  guestPassword,
  memoryMib,
  optionalVmid,
  parsedString,
  poolId,
  propertyString,
  sshPublicKeys,
} from '../input-formats';

/** The cloud-init options a clone may set (its source then needs a cloud-init drive). */
const cloudInitArgs = {
  ciuser: z
    .string()
    .regex(CIUSER_RE, { error: 'must be a user name: lower-case letters, digits, "_", "-"' })
    .optional()
    .describe('Cloud-init user.'),
  cipassword: guestPassword.optional().describe('Never shown back.'),
  sshkeys: sshPublicKeys.optional().describe('Public keys, one per line.'),
  ipconfig0: propertyString(parseIpconfig, 'ip=10.0.0.5/24,gw=10.0.0.1 or ip=dhcp')
    .optional()
    .describe('ip=dhcp or ip=10.0.0.5/24,gw=10.0.0.1.'),
  nameserver: parsedString(parseAddressList, 200).optional().describe('DNS servers, e.g. 1.1.1.1.'),
  searchdomain: parsedString(parseSearchDomains, 600).optional(),
};

/** Growing one disk of the clone, the boot disk unless named. */
const resizeArgs = {
  resize: propertyString(parseResizeSize, '+10G')
    .optional()
    .describe('Grow the boot disk: +10G or 40G.'),
  resize_disk: z
    .string()
    .regex(/^(?:ide|sata|scsi|virtio)\d{1,2}$/, { error: 'must be a disk slot such as scsi0' })
    .optional()
    .describe('Default: the boot disk.'),
};

export const cloneInput = z.strictObject({
  node: nodeName,
  source_vmid: vmid.describe('VM or template to clone.'),
  newid: optionalVmid.describe('Omitted: the next free id.'),
  // Perl takes "0" for false: Proxmox would name the clone after its source instead.
  name: dnsName
    .refine((name) => name !== '0', {
      error:
        'must not be "0": Proxmox takes it for no name (leave name out for Copy-of-VM-<source>)',
    })
    .optional(),
  full: z.boolean().optional().describe('false: linked clone (templates only, their default).'),
  target: nodeName.optional().describe('Node for the clone (shared storage).'),
  storage: storageId.optional().describe('For a full copy.'),
  pool: poolId.optional().describe('Resource pool, e.g. lab.'),
  description: description.optional(),
  ...cloudInitArgs,
  cores: cpuCores.optional(),
  memory: memoryMib.optional().describe('MiB.'),
  net0: propertyString(parseNet, 'virtio,bridge=vmbr0')
    .optional()
    .describe("Replaces the source's net0."),
  ...resizeArgs,
  start: z.boolean().optional().describe('Start it at the end.'),
  confirm,
  ...waitArgs,
});
export type CloneArgs = z.output<typeof cloneInput>;

const CLOUD_INIT = Object.keys(cloudInitArgs) as (keyof typeof cloudInitArgs)[];

/** Whether the call sets any cloud-init option (the source then needs a cloud-init drive). */
export function setsCloudInit(args: CloneArgs): boolean {
  return CLOUD_INIT.some((k) => args[k] !== undefined);
}

/** The config write after the clone: cloud-init, cores, memory, net0. */
function configParams(args: CloneArgs): Record<string, string> {
  return formParams({
    ciuser: args.ciuser,
    cipassword: args.cipassword,
    sshkeys: args.sshkeys === undefined ? undefined : encodeSshKeysForVm(args.sshkeys),
    ipconfig0: args.ipconfig0,
    nameserver: args.nameserver,
    searchdomain: args.searchdomain,
    cores: args.cores,
    memory: args.memory,
    net0: args.net0,
  });
}

/** The requests, in order, for the new VM `newid`; `disk` is the one to grow (when resizing). */
export function cloneSteps(args: CloneArgs, newid: number, disk: string | undefined): WriteStep[] {
  const src = `/nodes/${encodeURIComponent(args.node)}/qemu/${args.source_vmid}`;
  const at = `/nodes/${encodeURIComponent(args.target ?? args.node)}/qemu/${newid}`;
  const vm = `VM ${newid}`;
  const clone = formParams({
    newid,
    name: args.name,
    full: args.full,
    target: args.target,
    storage: args.storage,
    pool: args.pool,
    description: args.description,
  });
  const steps: WriteStep[] = [
    {
      doing: `cloning VM ${args.source_vmid} to ${vm}`,
      done: `${vm} was cloned from VM ${args.source_vmid}${args.target && args.target !== args.node ? ` onto ${args.target}` : ''}`,
      method: 'POST',
      path: `${src}/clone`,
      params: clone,
      answer: 'task?',
    },
  ];
  const config = configParams(args);
  if (Object.keys(config).length) {
    const what = Object.keys(config).join(', ');
    steps.push({
      doing: `setting ${what} on ${vm}`,
      done: `its ${what} were set`,
      method: 'POST',
      path: `${at}/config`,
      params: config,
      answer: 'task?',
    });
  }
  if (args.resize && disk) {
    const size = args.resize.text;
    const how = size.startsWith('+') ? `by ${size.slice(1)}` : `to ${size}`;
    steps.push({
      doing: `growing ${disk} of ${vm} ${how}`,
      done: `${disk} was grown ${how}`,
      method: 'PUT',
      path: `${at}/resize`,
      params: { disk, size },
      answer: 'task?',
    });
  }
  if (args.start)
    steps.push({
      doing: `starting ${vm}`,
      done: `${vm} was started`,
      method: 'POST',
      path: `${at}/status/start`,
      params: {},
      answer: 'task?',
    });
  return steps;
}
