// pve_create_lxc: a container from an OS template (POST /nodes/{node}/lxc), PLG's arguments
// validated to pve-container's formats; unprivileged unless the caller says otherwise (a
// privileged container's root is root on the host). The flow is ../../writes/guest-create.ts's.

import { z } from 'zod';
import { checkOstemplate, parseLxcNet, parseRootfs } from '../../proxmox/lxc-options';
import { keyFields } from '../../proxmox/config-keys';
import { checkedText } from '../../proxmox/option-rules';
import { confirm, nodeName, storageId, waitArgs } from '../common';
import { defineCreateTool } from '../../writes/guest-create';
// In the order the arguments use them, then the form's.
import {
  optionalVmid,
  parsedString,
  dnsName,
  memoryMib,
  cpuCores,
  propertyString,
  guestPassword,
  sshPublicKeys,
  poolId,
  formParams,
} from '../input-formats';

const input = z.strictObject({
  node: nodeName.describe('Node to create the container on.'),
  vmid: optionalVmid.describe('Container id; omitted: the next free id.'),
  ostemplate: parsedString(checkedText(checkOstemplate), 300).describe(
    'Template volume, e.g. local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst.',
  ),
  storage: storageId
    .optional()
    .describe('Storage for the root file system when rootfs is not given.'),
  hostname: dnsName.optional(),
  memory: memoryMib.optional().describe('Memory in MiB (default 512).'),
  cores: cpuCores.optional(),
  net0: propertyString(parseLxcNet, 'name=eth0,bridge=vmbr0,ip=dhcp')
    .optional()
    .describe('NIC, e.g. name=eth0,bridge=vmbr0,ip=dhcp.'),
  rootfs: propertyString(parseRootfs, 'local-lvm:8')
    .optional()
    .describe('Root disk STORAGE:SIZE_GiB, e.g. local-lvm:8.'),
  password: guestPassword.optional().describe("root's password (never shown back)."),
  ssh_public_keys: sshPublicKeys.optional().describe('OpenSSH public keys for root, one per line.'),
  unprivileged: z
    .boolean()
    .default(true)
    .describe('Default true; a privileged container is root on the host.'),
  pool: poolId.optional(),
  start: z.boolean().optional(),
  confirm,
  ...waitArgs,
});
type Args = z.output<typeof input>;

function params(args: Args): Record<string, string> {
  return formParams({
    ostemplate: args.ostemplate,
    storage: args.storage,
    hostname: args.hostname,
    memory: args.memory,
    cores: args.cores,
    net0: args.net0,
    rootfs: args.rootfs,
    password: args.password,
    'ssh-public-keys': args.ssh_public_keys,
    unprivileged: args.unprivileged,
    pool: args.pool,
    start: args.start,
  });
}

export const createLxc = defineCreateTool({
  name: 'pve_create_lxc',
  kind: 'lxc',
  // Whose keys get into the container: an approver who cannot read them cannot judge the call.
  judgedBy: ['ssh_public_keys'],
  title: 'Create an LXC container',
  description:
    'Create an LXC container from a template (ostemplate, see pve_list_storage_content content=vztmpl). ' +
    'Unprivileged by default. Requires confirm=true; otherwise a preview of the exact parameters and vmid.',
  input,
  // The fields of each property-string argument, as the config key table has them.
  policyFields: { net0: keyFields('lxc', 'net0'), rootfs: keyFields('lxc', 'rootfs') },
  params,
  guestName: (args) => args.hostname,
});
