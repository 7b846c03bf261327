// The seeded guests with full, plausible configs as PVE 9 writes them (disks with size=, NICs with
// MACs, smbios1/vmgenid, cloud-init keys on template 9000 with a crypted cipassword), a few
// snapshots (101: a tree with a RAM state; 201), protection on 102, no agent configured on 103
// and a configured agent that is not running on 105.
import { createHash } from 'node:crypto';
import type { Guest, GuestConfig, GuestType } from './cluster-state.ts';
import { guestFacts } from './guest-config.ts';

/** Stable fake identifiers derived from a seed string (dev data only). */
function hex(seed: string, length: number): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, length);
}
const uuid = (seed: string) => {
  const h = hex(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
const mac = (seed: string) =>
  `BC:24:11:${(hex(seed, 6).toUpperCase().match(/../g) ?? []).join(':')}`;

interface Spec {
  readonly vmid: number;
  readonly type: GuestType;
  readonly node: string;
  readonly running: boolean;
  readonly pool?: string;
  /** Whether the guest agent inside answers (qemu, while running). */
  readonly agentUp?: boolean;
  readonly config: GuestConfig;
}

const CTIME = 1_745_000_000;

function qemu(
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

function lxc(
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

const disk = (vol: string, size: string, extra = ',iothread=1') => `${vol}${extra},size=${size}`;

const SPECS: readonly Spec[] = [
  {
    vmid: 100,
    type: 'qemu',
    node: 'pve1',
    running: true,
    pool: 'prod',
    agentUp: true,
    config: qemu(100, 'web01', 2, 4096, {
      agent: '1',
      onboot: '1',
      scsi0: disk('local-lvm:vm-100-disk-0', '32G'),
      tags: 'prod;web',
    }),
  },
  {
    vmid: 101,
    type: 'qemu',
    node: 'pve1',
    running: true,
    pool: 'prod',
    agentUp: true,
    config: qemu(101, 'web02', 2, 4096, {
      agent: '1',
      onboot: '1',
      parent: 'post-upgrade',
      scsi0: disk('local-lvm:vm-101-disk-0', '32G'),
      tags: 'prod;web',
    }),
  },
  {
    vmid: 102,
    type: 'qemu',
    node: 'pve1',
    running: true,
    pool: 'prod',
    agentUp: true,
    config: qemu(102, 'db01', 4, 16384, {
      agent: '1,fstrim_cloned_disks=1',
      onboot: '1',
      protection: '1',
      scsi0: disk('ceph-pool:vm-102-disk-0', '128G'),
      scsi1: disk('ceph-pool:vm-102-disk-1', '256G', ',discard=on,iothread=1'),
      tags: 'db;prod',
    }),
  },
  {
    vmid: 103,
    type: 'qemu',
    node: 'pve2',
    running: true,
    config: qemu(103, 'ci-runner01', 4, 8192, {
      boot: 'order=virtio0;net0',
      virtio0: disk('local-lvm:vm-103-disk-0', '64G'),
      tags: 'ci',
    }),
  },
  {
    vmid: 104,
    type: 'qemu',
    node: 'pve2',
    running: false,
    pool: 'lab',
    config: qemu(104, 'win11-lab', 4, 8192, {
      agent: '1',
      bios: 'ovmf',
      cpu: 'host',
      efidisk0: 'local-lvm:vm-104-disk-0,efitype=4m,ms-cert=2023,pre-enrolled-keys=1,size=4M',
      machine: 'pc-q35-10.0+pve1',
      ostype: 'win11',
      scsi0: disk('local-lvm:vm-104-disk-1', '80G', ',discard=on,iothread=1'),
      tags: 'lab;windows',
      tpmstate0: 'local-lvm:vm-104-disk-2,size=4M,version=v2.0',
    }),
  },
  {
    vmid: 105,
    type: 'qemu',
    node: 'pve3',
    running: true,
    agentUp: false,
    config: qemu(105, 'k8s-worker01', 4, 8192, {
      agent: '1',
      scsi0: disk('ceph-pool:vm-105-disk-0', '50G'),
      tags: 'k8s',
    }),
  },
  {
    vmid: 110,
    type: 'lxc',
    node: 'pve1',
    running: true,
    config: lxc(110, 'dns01', 1, 512, {
      net0: `name=eth0,bridge=vmbr0,firewall=1,gw=10.10.0.1,hwaddr=${mac('net0-110')},ip=10.10.0.53/24,type=veth`,
      onboot: '1',
      rootfs: 'local-lvm:vm-110-disk-0,size=8G',
      tags: 'infra',
    }),
  },
  {
    vmid: 200,
    type: 'lxc',
    node: 'pve2',
    running: true,
    pool: 'prod',
    config: lxc(200, 'proxy01', 2, 1024, {
      onboot: '1',
      rootfs: 'local-lvm:vm-200-disk-0,size=10G',
      tags: 'prod;web',
    }),
  },
  {
    vmid: 201,
    type: 'lxc',
    node: 'pve2',
    running: true,
    config: lxc(201, 'monitoring', 2, 2048, {
      mp0: 'local-lvm:vm-201-disk-1,mp=/var/lib/prometheus,backup=1,size=16G',
      parent: 'before-grafana-12',
      rootfs: 'ceph-pool:vm-201-disk-0,size=32G',
      tags: 'infra;monitoring',
    }),
  },
  {
    vmid: 300,
    type: 'qemu',
    node: 'pve3',
    running: false,
    config: qemu(300, 'backup-test', 2, 2048, {
      ide2: 'local:iso/debian-13.1.0-amd64-netinst.iso,media=cdrom,size=754M',
      scsi0: disk('local-lvm:vm-300-disk-0', '32G'),
    }),
  },
  {
    vmid: 301,
    type: 'lxc',
    node: 'pve3',
    running: false,
    config: lxc(301, 'old-wiki', 1, 512, {
      ostype: 'ubuntu',
      rootfs: 'local-lvm:vm-301-disk-0,size=8G',
      tags: 'legacy',
    }),
  },
  {
    vmid: 9000,
    type: 'qemu',
    node: 'pve1',
    running: false,
    config: qemu(9000, 'debian-13-cloudinit', 2, 2048, {
      agent: '1',
      boot: 'order=scsi0',
      cipassword: '$5$Wq2bk7yV$3KcAFn0c9Yw4x1v2s8zQe6jB0Gm5tRr7pLhUdXoNiE/',
      ciuser: 'debian',
      ide2: 'local-lvm:vm-9000-cloudinit,media=cdrom',
      ipconfig0: 'ip=dhcp',
      scsi0: 'local-lvm:base-9000-disk-0,discard=on,size=3584M',
      serial0: 'socket',
      sshkeys:
        'ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIHsimulatorOnlyKeyNotARealOne%20ops%40example.com%0A',
      tags: 'template',
      template: '1',
      vga: 'serial0',
    }),
  },
];

/** Snapshot sections: the config as it was, plus snaptime, description and a RAM state. */
function seedSnapshots(spec: Spec): Map<string, GuestConfig> {
  const { parent: _parent, ...base } = spec.config;
  const snaps = new Map<string, GuestConfig>();
  if (spec.vmid === 101) {
    snaps.set('pre-upgrade', {
      ...base,
      memory: '2048',
      description: 'Before the Debian 13 upgrade',
      snaptime: String(CTIME + 86_400),
    });
    snaps.set('post-upgrade', {
      ...base,
      parent: 'pre-upgrade',
      snaptime: String(CTIME + 90_000),
      runningmachine: 'pc-i440fx-10.0+pve1',
      vmstate: 'local-lvm:vm-101-state-post-upgrade',
    });
  }
  if (spec.vmid === 201) {
    snaps.set('before-grafana-12', {
      ...base,
      description: 'Working Grafana 11',
      snaptime: String(CTIME + 120_000),
    });
  }
  return snaps;
}

export function seedGuests(now: number): Guest[] {
  return SPECS.map((spec, index) => {
    const guest: Guest = {
      vmid: spec.vmid,
      type: spec.type,
      node: spec.node,
      config: { ...spec.config },
      pending: {},
      pendingDelete: [],
      snapshots: seedSnapshots(spec),
      status: spec.running ? 'running' : 'stopped',
      qmpstatus: 'running',
      agentRunning: spec.running && spec.agentUp === true,
      cpu: 0,
      mem: 0,
      disk: 0,
      netin: 0,
      netout: 0,
      diskread: 0,
      diskwrite: 0,
      ...(spec.pool !== undefined ? { pool: spec.pool } : {}),
    };
    if (spec.running) {
      const load = (index % 5) + 1;
      const facts = guestFacts(guest, 16);
      Object.assign(guest, {
        mem: Math.round(facts.maxmem * (0.35 + load * 0.08)),
        // PVE reports disk usage only for containers; for VMs it is 0 without the guest agent.
        disk: spec.type === 'lxc' ? Math.round(facts.maxdisk * (0.1 + load * 0.07)) : 0,
        cpu: Math.round((0.0049 * load + 0.0003 * index) * 1e6) / 1e6,
        netin: 2_456_116_121 - index * 97_531_357,
        netout: 545_248_946 - index * 31_415_926,
        diskread: 4_510_777_856 - index * 123_456_789,
        diskwrite: 6_059_209_728 - index * 234_567_890,
        bootedAt: now - (874_350 - index * 3_600) * 1000,
        pid: 1_044_989 + index * 7_919,
      });
    }
    return guest;
  });
}
