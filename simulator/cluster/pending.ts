// Pending config changes (the [PENDING] section): updates are written there first, then applied at
// once for a stopped guest, or by hotplug for a running one, where what cannot be hotplugged
// waits for the next start (qemu-server vmconfig_hotplug_pending, pve-container's counterpart).
import type { Guest, GuestConfig } from './cluster-state.ts';
import { addUnused, isCdrom, isVolumeKey, volumeOf } from './guest-config.ts';

const QEMU_FAST_PLUG = new Set([
  'description',
  'hookscript',
  'lock',
  'migrate_downtime',
  'migrate_speed',
  'name',
  'onboot',
  'protection',
  'shares',
  'startup',
  'tags',
  'vmstatestorage',
  // cloud-init options take effect when the cloud-init drive is regenerated
  'cicustom',
  'cipassword',
  'citype',
  'ciupgrade',
  'ciuser',
  'nameserver',
  'searchdomain',
  'sshkeys',
]);

const LXC_FAST_PLUG = new Set([
  'description',
  'onboot',
  'startup',
  'protection',
  'hostname',
  'hookscript',
  'cores',
  'tags',
  'lock',
]);

/** Whether a running guest takes this change now (true) or keeps it pending (false). */
function hotpluggable(guest: Guest, key: string, deleting: boolean): boolean {
  if (guest.type === 'lxc') {
    if (LXC_FAST_PLUG.has(key) || ['cpulimit', 'cpuunits', 'swap'].includes(key)) return true;
    if (/^net\d+$/.test(key) || /^unused\d+$/.test(key)) return true;
    if (deleting) return false;
    // new mount points and devices hotplug; replacing an existing one does not
    return key === 'memory' || (/^(mp|dev)\d+$/.test(key) && guest.config[key] === undefined);
  }
  if (QEMU_FAST_PLUG.has(key) || /^ipconfig\d+$/.test(key)) return true;
  const features = (guest.config.hotplug ?? 'network,disk,usb').split(/[,;\s]+/);
  const all = guest.config.hotplug === '1';
  const has = (feature: string) => all || features.includes(feature);
  if (/^net\d+$/.test(key)) return has('network');
  if (/^(scsi|virtio)\d+$/.test(key)) return has('disk');
  if (/^unused\d+$/.test(key) || ['cpuunits', 'cpulimit', 'balloon'].includes(key)) return true;
  if (key === 'memory') return has('memory');
  if (key === 'vcpus') return has('cpu');
  return false;
}

export function stageValue(guest: Guest, key: string, value: string): void {
  guest.pending[key] = value;
  guest.pendingDelete = guest.pendingDelete.filter((k) => k !== key);
}

/** add_to_pending_delete: `!key` marks a forced delete (the volume is destroyed, not kept). */
export function stageDelete(guest: Guest, key: string, force = false): void {
  delete guest.pending[key];
  guest.pendingDelete = [
    ...guest.pendingDelete.filter((k) => k.replace(/^!/, '') !== key),
    force ? `!${key}` : key,
  ];
}

export function revertPending(guest: Guest, key: string): void {
  delete guest.pending[key];
  guest.pendingDelete = guest.pendingDelete.filter((k) => k.replace(/^!/, '') !== key);
}

/** A replaced or deleted disk becomes unused[n], or is destroyed after a forced delete. */
function dropVolume(
  guest: Guest,
  key: string,
  force: boolean,
  destroy: (volid: string) => void,
): void {
  const old = guest.config[key];
  if (old === undefined || !isVolumeKey(guest.type, key) || (guest.type === 'qemu' && isCdrom(old)))
    return;
  const volid = volumeOf(guest.type, old);
  if (volid === '' || volid === 'none' || volid.startsWith('/')) return;
  if (force) destroy(volid);
  else addUnused(guest.config, volid);
}

/** Apply what may be applied now: everything when stopped, the hotpluggable part when running. */
export function applyStaged(guest: Guest, destroy: (volid: string) => void = () => {}): void {
  const running = guest.status === 'running';
  for (const entry of [...guest.pendingDelete]) {
    const key = entry.replace(/^!/, '');
    if (running && !hotpluggable(guest, key, true)) continue;
    dropVolume(guest, key, entry.startsWith('!'), destroy);
    delete guest.config[key];
    guest.pendingDelete = guest.pendingDelete.filter((k) => k !== entry);
  }
  for (const [key, value] of Object.entries(guest.pending)) {
    if (running && !hotpluggable(guest, key, false)) continue;
    const old = guest.config[key];
    if (old !== undefined && volumeOf(guest.type, old) !== volumeOf(guest.type, value))
      dropVolume(guest, key, false, destroy);
    guest.config[key] = value;
    delete guest.pending[key];
  }
  // cleanup_pending: a pending value equal to the current one is no change
  for (const [key, value] of Object.entries(guest.pending)) {
    if (guest.config[key] === value) delete guest.pending[key];
  }
}

/** load_current_config: the config with pending values applied unless `current` is asked. */
export function currentConfig(guest: Guest, current: boolean): GuestConfig {
  const config = { ...guest.config };
  if (current) return config;
  Object.assign(config, guest.pending);
  for (const key of guest.pendingDelete) delete config[key.replace(/^!/, '')];
  return config;
}
