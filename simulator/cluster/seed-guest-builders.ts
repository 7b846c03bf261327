// Builders for the seeded guests' configs: stable fake MACs and UUIDs, and the option sets PVE 9
// writes for a VM (virtio-scsi, x86-64-v2-AES, smbios1, vmgenid, meta) and for a container.
import { createHash } from 'node:crypto';
import type { GuestConfig, GuestType } from './cluster-state.ts';

/** Stable fake identifiers derived from a seed string (dev data only). */
function hex(seed: string, length: number): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, length);
}
const uuid = (seed: string) => {
  const h = hex(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
export const mac = (seed: string) =>
  `BC:24:11:${(hex(seed, 6).toUpperCase().match(/../g) ?? []).join(':')}`;

export interface GuestSpec {
  readonly vmid: number;
  readonly type: GuestType;
  readonly node: string;
  readonly running: boolean;
  readonly pool?: string;
  /** Whether the guest agent inside answers (qemu, while running). */
  readonly agentUp?: boolean;
  readonly config: GuestConfig;
}

export const CTIME = 1_745_000_000;

export function qemuConfig(
  vmid: number,
  name: string,
  cores: number,
  memory: number,
  extra: GuestConfig,
): GuestConfig {
  return {
    boot: 'order=scsi0;ide2;net0',
    cores: String(cores),
    cpu: 'x86-64-v2-AES',
    ide2: 'none,media=cdrom',
    memory: String(memory),
    meta: `creation-qemu=9.2.0,ctime=${CTIME + vmid}`,
    name,
    net0: `virtio=${mac(`net0-${vmid}`)},bridge=vmbr0,firewall=1`,
    numa: '0',
    ostype: 'l26',
    scsihw: 'virtio-scsi-single',
    smbios1: `uuid=${uuid(`smbios-${vmid}`)}`,
    sockets: '1',
    vmgenid: uuid(`vmgenid-${vmid}`),
    ...extra,
  };
}

export function lxcConfig(
  vmid: number,
  hostname: string,
  cores: number,
  memory: number,
  extra: GuestConfig,
): GuestConfig {
  return {
    arch: 'amd64',
    cores: String(cores),
    features: 'nesting=1',
    hostname,
    memory: String(memory),
    net0: `name=eth0,bridge=vmbr0,firewall=1,hwaddr=${mac(`net0-${vmid}`)},ip=dhcp,type=veth`,
    ostype: 'debian',
    swap: '512',
    unprivileged: '1',
    ...extra,
  };
}

export const disk = (vol: string, size: string, extra = ',iothread=1') =>
  `${vol}${extra},size=${size}`;
