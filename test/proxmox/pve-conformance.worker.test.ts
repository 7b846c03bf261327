// Every request the Worker sends to Proxmox is valid for the real PVE 9.1.3 API schema: the
// simulator logs them; each is checked against Proxmox's own schema (read at test time from the
// shared reference data, never copied into the project).

import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { checkRequest, decodeFormLikePve } from '../support/pve-schema-check';
import { call, connect } from '../support/worker/mcp';
import { ISO } from '../support/worker/fixtures';
import { sim } from '../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const endpoints = inject('pveEndpoints');
const KEYS = [
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@example.com',
  'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTY= b@example.com',
];

describe.skipIf(!endpoints)('requests sent to Proxmox against the real PVE 9.1.3 schema', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    await sim.config({ taskDurationMs: 50 });
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('are all valid, for every argument the tools accept', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['pve_list_vms', {}],
      ['pve_list_vms', { node: 'pve1', type: 'qemu', tag: 'prod', limit: 2 }],
      ['pve_create_qemu_vm', { node: 'pve1', name: 'a' }],
      [
        'pve_create_qemu_vm',
        {
          node: 'pve1',
          name: 'full.example.com',
          memory: 4096,
          cores: 4,
          sockets: 2,
          net0: 'virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=1,tag=20,mtu=1500,queues=2,rate=100,link_down=0',
          scsi0:
            'local-lvm:40,iothread=1,discard=on,ssd=1,cache=writeback,aio=io_uring,backup=0,replicate=0,serial=disk-1',
          ide2: ISO,
          ostype: 'win11',
          cpu: 'x86-64-v2-AES,flags=+aes;-pcid,hidden=1',
          scsihw: 'virtio-scsi-single',
          boot: 'order=scsi0;ide2;net0',
          agent: '1,fstrim_cloned_disks=1,freeze-fs=0,type=virtio',
          tags: ['web', 'prod'],
          start: true,
          description: 'line 1\nline 2; & = +',
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_create_qemu_vm',
        { node: 'pve2', vmid: 4242, memory: 512, agent: false, start: false, confirm: true },
      ],
      // Reads.
      ['pve_get_version', {}],
      ['pve_get_cluster_status', {}],
      ['pve_list_nodes', {}],
      ['pve_get_node_metrics', { node: 'pve1' }],
      ...['vm', 'storage', 'node', 'sdn', 'pool'].map(
        (resource_type): [string, Record<string, unknown>] => [
          'pve_list_resources',
          { resource_type },
        ],
      ),
      ['pve_get_vm_status', { node: 'pve1', vmid: 100, guest_ips: true }],
      ['pve_get_vm_status', { node: 'pve1', vmid: 110, vm_type: 'lxc', guest_ips: true }],
      ['pve_get_vm_config', { node: 'pve1', vmid: 9000 }],
      ['pve_get_vm_config', { node: 'pve1', vmid: 110, vm_type: 'lxc' }],
      ['pve_list_storage', {}],
      ['pve_list_storage', { node: 'pve1' }],
      ['pve_list_backups', { node: 'pve1', storage: 'local', vmid: 100 }],
      ['pve_list_storage_content', { node: 'pve1', storage: 'local', content: 'iso' }],
      [
        'pve_list_storage_content',
        { node: 'pve1', storage: 'local-lvm', content: 'images', vmid: 100 },
      ],
      ['pve_list_snapshots', { node: 'pve2', vmid: 104 }],
      // Writes, each confirmed, for both guest kinds where both exist.
      ['pve_suspend_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_resume_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_reboot_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      [
        'pve_shutdown_vm',
        { node: 'pve1', vmid: 101, timeout: 20, force_stop: true, confirm: true, wait: true },
      ],
      ['pve_start_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_stop_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_reboot_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      [
        'pve_shutdown_vm',
        { node: 'pve2', vmid: 200, vm_type: 'lxc', timeout: 10, confirm: true, wait: true },
      ],
      ['pve_start_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      ['pve_suspend_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      ['pve_resume_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      ['pve_stop_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      [
        'pve_create_snapshot',
        {
          node: 'pve2',
          vmid: 104,
          snapname: 'conf_a',
          description: 'a; b & c = d',
          vmstate: false,
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_create_snapshot',
        { node: 'pve2', vmid: 104, snapname: 'conf_b', confirm: true, wait: true },
      ],
      [
        'pve_rollback_snapshot',
        { node: 'pve2', vmid: 104, snapname: 'conf_a', start: false, confirm: true, wait: true },
      ],
      [
        'pve_delete_snapshot',
        { node: 'pve2', vmid: 104, snapname: 'conf_b', confirm: true, wait: true },
      ],
      [
        'pve_create_snapshot',
        { node: 'pve2', vmid: 201, vm_type: 'lxc', snapname: 'ct_snap', confirm: true, wait: true },
      ],
      [
        'pve_rollback_snapshot',
        { node: 'pve2', vmid: 201, vm_type: 'lxc', snapname: 'ct_snap', confirm: true, wait: true },
      ],
      [
        'pve_delete_snapshot',
        { node: 'pve2', vmid: 201, vm_type: 'lxc', snapname: 'ct_snap', confirm: true, wait: true },
      ],
      // Part 2: clones with every follow-up step, containers, config, resize, migrate, delete.
      [
        'pve_clone_vm',
        {
          node: 'pve1',
          source_vmid: 9000,
          newid: 7000,
          name: 'clone.example.com',
          full: true,
          storage: 'local-lvm',
          pool: 'lab',
          description: 'cloned; & = +',
          ciuser: 'ops',
          cipassword: 'pw; & = +x',
          sshkeys: `${KEYS[0]}\n${KEYS[1]}`,
          ipconfig0: 'ip=10.0.0.70/24,gw=10.0.0.1,ip6=2001:db8::70/64,gw6=2001:db8::1',
          nameserver: '10.0.0.53 2001:db8::53',
          searchdomain: 'example.com lab.example.com',
          cores: 2,
          memory: 2048,
          net0: 'virtio,bridge=vmbr1,tag=30,firewall=1',
          resize: '+1536M',
          start: true,
          confirm: true,
          wait: true,
          timeout_s: 30,
        },
      ],
      [
        'pve_clone_vm',
        {
          node: 'pve1',
          source_vmid: 9000,
          newid: 7001,
          full: false,
          resize: '4G',
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_create_lxc',
        {
          node: 'pve1',
          vmid: 7100,
          ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
          storage: 'local-lvm',
          hostname: 'ct.example.com',
          memory: 1024,
          cores: 2,
          net0: 'name=eth0,bridge=vmbr0,ip=10.0.0.71/24,gw=10.0.0.1,ip6=auto,firewall=1,tag=5',
          rootfs: 'local-lvm:4,acl=1,mountoptions=noatime;nodev',
          password: 'pw; & = +y',
          ssh_public_keys: KEYS[0],
          unprivileged: true,
          pool: 'lab',
          start: true,
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_create_lxc',
        {
          node: 'pve2',
          vmid: 7101,
          ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
          storage: 'local-lvm',
          unprivileged: false,
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_set_vm_config',
        {
          node: 'pve1',
          vmid: 7001,
          confirm: true,
          wait: true,
          delete: ['tags'],
          config: {
            name: 'linked',
            description: 'x; & = y',
            onboot: true,
            protection: false,
            acpi: true,
            agent: '1,fstrim_cloned_disks=1',
            balloon: 512,
            bios: 'seabios',
            boot: 'order=scsi0;net0',
            cores: 2,
            cpu: 'host,flags=+aes',
            cpulimit: 1.5,
            cpuunits: 200,
            localtime: true,
            memory: 2048,
            numa: false,
            ostype: 'l26',
            scsihw: 'virtio-scsi-single',
            shares: 1000,
            sockets: 1,
            tablet: false,
            vcpus: 2,
            ciuser: 'ops',
            cipassword: 'pw&x=1',
            citype: 'nocloud',
            ciupgrade: false,
            sshkeys: KEYS[1],
            nameserver: '10.0.0.53',
            searchdomain: 'example.com',
            ipconfig1: 'ip=dhcp,ip6=auto',
            net1: 'e1000=BC:24:11:00:00:07,bridge=vmbr0,mtu=1500',
            scsi1: 'local-lvm:1,iothread=1,discard=on,ssd=1',
            virtio1: 'local-lvm:1,ro=0',
            sata1: 'local-lvm:1',
            ide3: 'none,media=cdrom',
          },
        },
      ],
      [
        'pve_set_vm_config',
        {
          node: 'pve1',
          vmid: 7100,
          vm_type: 'lxc',
          confirm: true,
          delete: ['onboot'],
          config: {
            hostname: 'ct2',
            memory: 768,
            swap: 256,
            cores: 1,
            cpulimit: 1,
            cpuunits: 100,
            cmode: 'tty',
            console: true,
            tty: 2,
            ostype: 'debian',
            tags: 'a;b',
            description: 'ct; & =',
            nameserver: '10.0.0.53',
            searchdomain: 'example.com',
            net1: 'name=eth1,bridge=vmbr1,ip=dhcp,ip6=manual,mtu=9000,rate=10,trunks=10;20',
            mp0: 'local-lvm:1,mp=/srv/data,backup=1',
          },
        },
      ],
      [
        'pve_resize_disk',
        { node: 'pve1', vmid: 7001, disk: 'scsi1', size: '+512M', confirm: true, wait: true },
      ],
      [
        'pve_resize_disk',
        {
          node: 'pve1',
          vmid: 7100,
          vm_type: 'lxc',
          disk: 'rootfs',
          size: '5G',
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_migrate_vm',
        {
          node: 'pve1',
          vmid: 7001,
          target: 'pve3',
          targetstorage: 'local-lvm:local-lvm',
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_migrate_vm',
        {
          node: 'pve1',
          vmid: 100,
          target: 'pve2',
          online: true,
          with_local_disks: true,
          targetstorage: 'local-lvm',
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_migrate_vm',
        {
          node: 'pve1',
          vmid: 7100,
          vm_type: 'lxc',
          target: 'pve2',
          restart: true,
          targetstorage: 'local-lvm',
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_delete_vm',
        {
          node: 'pve3',
          vmid: 300,
          purge: true,
          destroy_unreferenced_disks: true,
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_delete_vm',
        { node: 'pve2', vmid: 7101, vm_type: 'lxc', purge: false, confirm: true, wait: true },
      ],
      ['pve_guest_info', { node: 'pve1', vmid: 102 }],
      ['pve_guest_file_read', { node: 'pve1', vmid: 102, file: '/etc/hostname' }],
      [
        'pve_guest_exec',
        { node: 'pve1', vmid: 102, command: ['echo', 'a b', '-n'], input_data: 'x', confirm: true },
      ],
      [
        'pve_create_backup',
        {
          node: 'pve1',
          vmid: 102,
          storage: 'local',
          mode: 'suspend',
          compress: 'gzip',
          notes: 'before {{guestname}} \\ upgrade',
          protected: true,
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_create_backup',
        { node: 'pve1', vmid: 110, storage: 'pbs-backup', mode: 'stop', confirm: true, wait: true },
      ],
      ['pve_api_request', { method: 'GET', path: '/cluster/resources', params: { type: 'vm' } }],
      [
        'pve_api_request',
        {
          method: 'PUT',
          path: '/nodes/pve2/lxc/200/config',
          params: { onboot: true, description: 'raw; & =' },
          confirm: true,
        },
      ],
    ];
    for (const [tool, args] of calls) {
      const result = await call(client, tool, args);
      expect(result.isError, `${tool}: ${JSON.stringify(result.content)}`).toBeFalsy();
      expect(result.structuredContent?.mode, tool).not.toBe('unchanged');
    }
    // Restores of what is there (a VM from the Proxmox Backup Server, a container from a file),
    // and deleting the backup taken above.
    const listed = async (node: string, storage: string, vmid: number) =>
      (
        (await call(client, 'pve_list_backups', { node, storage, vmid })).structuredContent as {
          backups: { volid: string; protected: boolean }[];
        }
      ).backups;
    const [vmBackup] = await listed('pve1', 'pbs-backup', 100);
    const [ctBackup] = await listed('pve1', 'local', 110);
    const taken = (await listed('pve1', 'local', 102)).find((b) => b.protected);
    for (const [tool, args] of [
      [
        'pve_restore_backup',
        {
          node: 'pve1',
          volume: vmBackup!.volid,
          vmid: 7200,
          storage: 'local-lvm',
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_restore_backup',
        {
          node: 'pve1',
          volume: ctBackup!.volid,
          vmid: 7201,
          storage: 'local-lvm',
          start: true,
          confirm: true,
          wait: true,
        },
      ],
      [
        'pve_delete_backup',
        {
          node: 'pve1',
          volume: (await listed('pve1', 'local', 102)).find((b) => !b.protected)!.volid,
          confirm: true,
          wait: true,
        },
      ],
    ] as const) {
      const result = await call(client, tool, args);
      expect(result.isError, `${tool}: ${JSON.stringify(result.content)}`).toBeFalsy();
    }
    expect(taken).toBeDefined();
    const requests = await sim.requests();
    // Every confirmed write went out: 2 creates, 12 power actions, 7 snapshot operations; part 2:
    // clones 4 + 2 requests, 2 containers, 2 configs, 2 resizes, 3 migrations, 2 deletes, 1 raw;
    // inside guests and backups: 1 exec, 2 backups, 2 restores, 1 backup deleted.
    expect(requests.filter((r) => r.method !== 'GET')).toHaveLength(21 + 18 + 6);
    const problems: string[] = [];
    for (const r of requests) {
      const decoded = r.body === null ? { params: null, problems: [] } : decodeFormLikePve(r.body);
      const found = [
        ...decoded.problems,
        ...checkRequest(endpoints!, {
          method: r.method,
          path: r.path,
          query: r.query,
          params: decoded.params,
        }),
      ];
      problems.push(...found.map((p) => `${r.method} ${r.path}: ${p}`));
    }
    expect(problems).toEqual([]);
  }, 60_000);
});
