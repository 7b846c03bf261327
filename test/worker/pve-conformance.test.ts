// Every request the Worker sends to Proxmox is valid for the real PVE 9.1.3 API schema: the
// simulator logs them; each is checked against Proxmox's own schema (read at test time from the
// shared reference data, never copied into the project).

import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { checkRequest, decodeFormLikePve } from '../support/pve-schema-check';
import { call, connect } from './helpers/mcp';
import { ISO } from './helpers/fixtures';
import { sim } from './helpers/sim';

const endpoints = inject('pveEndpoints');

describe.skipIf(!endpoints)('requests sent to Proxmox against the real PVE 9.1.3 schema', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
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
          node: 'pve1', name: 'full.example.com', memory: 4096, cores: 4, sockets: 2,
          net0: 'virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=1,tag=20,mtu=1500,queues=2,rate=100,link_down=0',
          scsi0: 'local-lvm:40,iothread=1,discard=on,ssd=1,cache=writeback,aio=io_uring,backup=0,replicate=0,serial=disk-1',
          ide2: ISO, ostype: 'win11', cpu: 'x86-64-v2-AES,flags=+aes;-pcid,hidden=1', scsihw: 'virtio-scsi-single',
          boot: 'order=scsi0;ide2;net0', agent: '1,fstrim_cloned_disks=1,freeze-fs=0,type=virtio',
          tags: ['web', 'prod'], start: true, description: 'line 1\nline 2; & = +', confirm: true, wait: true,
        },
      ],
      ['pve_create_qemu_vm', { node: 'pve2', vmid: 4242, memory: 512, agent: false, start: false, confirm: true }],
      // Reads.
      ['pve_get_version', {}],
      ['pve_get_cluster_status', {}],
      ['pve_list_nodes', {}],
      ['pve_get_node_metrics', { node: 'pve1' }],
      ...['vm', 'storage', 'node', 'sdn', 'pool'].map((resource_type): [string, Record<string, unknown>] => ['pve_list_resources', { resource_type }]),
      ['pve_get_vm_status', { node: 'pve1', vmid: 100, guest_ips: true }],
      ['pve_get_vm_status', { node: 'pve1', vmid: 110, vm_type: 'lxc', guest_ips: true }],
      ['pve_get_vm_config', { node: 'pve1', vmid: 9000 }],
      ['pve_get_vm_config', { node: 'pve1', vmid: 110, vm_type: 'lxc' }],
      ['pve_list_storage', {}],
      ['pve_list_storage', { node: 'pve1' }],
      ['pve_list_backups', { node: 'pve1', storage: 'local', vmid: 100 }],
      ['pve_list_storage_content', { node: 'pve1', storage: 'local', content: 'iso' }],
      ['pve_list_storage_content', { node: 'pve1', storage: 'local-lvm', content: 'images', vmid: 100 }],
      ['pve_list_snapshots', { node: 'pve2', vmid: 104 }],
      // Writes, each confirmed, for both guest kinds where both exist.
      ['pve_suspend_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_resume_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_reboot_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_shutdown_vm', { node: 'pve1', vmid: 101, timeout: 20, force_stop: true, confirm: true, wait: true }],
      ['pve_start_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_stop_vm', { node: 'pve1', vmid: 101, confirm: true, wait: true }],
      ['pve_reboot_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      ['pve_shutdown_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', timeout: 10, confirm: true, wait: true }],
      ['pve_start_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      ['pve_suspend_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      ['pve_resume_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      ['pve_stop_vm', { node: 'pve2', vmid: 200, vm_type: 'lxc', confirm: true, wait: true }],
      ['pve_create_snapshot', { node: 'pve2', vmid: 104, snapname: 'conf_a', description: 'a; b & c = d', vmstate: false, confirm: true, wait: true }],
      ['pve_create_snapshot', { node: 'pve2', vmid: 104, snapname: 'conf_b', confirm: true, wait: true }],
      ['pve_rollback_snapshot', { node: 'pve2', vmid: 104, snapname: 'conf_a', start: false, confirm: true, wait: true }],
      ['pve_delete_snapshot', { node: 'pve2', vmid: 104, snapname: 'conf_b', confirm: true, wait: true }],
      ['pve_create_snapshot', { node: 'pve2', vmid: 201, vm_type: 'lxc', snapname: 'ct_snap', confirm: true, wait: true }],
      ['pve_rollback_snapshot', { node: 'pve2', vmid: 201, vm_type: 'lxc', snapname: 'ct_snap', confirm: true, wait: true }],
      ['pve_delete_snapshot', { node: 'pve2', vmid: 201, vm_type: 'lxc', snapname: 'ct_snap', confirm: true, wait: true }],
    ];
    for (const [tool, args] of calls) {
      const result = await call(client, tool, args);
      expect(result.isError, `${tool}: ${JSON.stringify(result.content)}`).toBeFalsy();
      expect(result.structuredContent?.mode, tool).not.toBe('unchanged');
    }
    const requests = await sim.requests();
    // Every confirmed write went out: 2 creates, 12 power actions, 7 snapshot operations.
    expect(requests.filter((r) => r.method !== 'GET')).toHaveLength(21);
    const problems: string[] = [];
    for (const r of requests) {
      const decoded = r.body === null ? { params: null, problems: [] } : decodeFormLikePve(r.body);
      const found = [...decoded.problems, ...checkRequest(endpoints!, { method: r.method, path: r.path, query: r.query, params: decoded.params })];
      problems.push(...found.map((p) => `${r.method} ${r.path}: ${p}`));
    }
    expect(problems).toEqual([]);
  });
});
