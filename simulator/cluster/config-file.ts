// A guest's config file as qemu-server/pve-container write it (description as leading comment
// lines, sorted keys, then [PENDING] and one [snapname] section per snapshot), and its digest:
// the SHA-1 of that text, which clients send back to detect concurrent changes.
import { createHash } from 'node:crypto';
import type { Guest, GuestConfig } from './cluster-state.ts';

function section(config: GuestConfig, pending = false): string {
  let raw = '';
  const description = config.description;
  if (description !== undefined) {
    if (description !== '') for (const line of description.split('\n')) raw += `#${line}\n`;
    else if (pending) raw += '#\n';
  }
  for (const key of Object.keys(config).sort()) {
    if (key === 'description') continue;
    raw += `${key}: ${config[key]}\n`;
  }
  return raw;
}

/** The raw config file text (/etc/pve/nodes/<node>/{qemu-server,lxc}/<vmid>.conf). */
export function configFileText(guest: Guest): string {
  let raw = section(guest.config);
  const pending: GuestConfig = { ...guest.pending };
  if (guest.pendingDelete.length > 0) pending.delete = guest.pendingDelete.join(',');
  if (Object.keys(pending).length > 0) raw += `\n[PENDING]\n${section(pending, true)}`;
  for (const name of [...guest.snapshots.keys()].sort()) {
    raw += `\n[${name}]\n${section(guest.snapshots.get(name) ?? {})}`;
  }
  return raw;
}

export function configDigest(guest: Guest): string {
  return createHash('sha1').update(configFileText(guest)).digest('hex');
}

/** The cluster file system path PVE names in "Configuration file ... does not exist". */
export function configPath(type: Guest['type'], node: string, vmid: number | string): string {
  return `nodes/${node}/${type === 'qemu' ? 'qemu-server' : 'lxc'}/${vmid}.conf`;
}
