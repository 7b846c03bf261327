// pve_set_vm_config over /mcp against the simulator: the preview shows each change against the
// config as it is, writing nothing; a VM's change is a task (POST), a container's is applied at
// once (PUT); the digest guards against a config changed meanwhile; keys and values are checked
// for the guest's kind; attaching another volume is refused; config.cipassword stays secret.

import { describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auditRecords } from '../../support/worker/audit';
import { call, text } from '../../support/worker/mcp';
import { simSession } from '../../support/worker/session';
import { sim } from '../../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../../support/worker/policy';

usePolicy(OPEN_POLICY);

const PASSWORD = 'n3w-cloud-pw';

describe('pve_set_vm_config', () => {
  const session = simSession();
  const client = (): Client => session.client;

  async function refused(
    args: Record<string, unknown>,
    kind: string,
    message: RegExp,
  ): Promise<void> {
    const r = await call(client(), 'pve_set_vm_config', { ...args, confirm: true });
    expect(r.isError, text(r)).toBe(true);
    expect(r.structuredContent!.error).toMatchObject({ kind });
    expect(text(r)).toMatch(message);
    expect(await sim.writes()).toEqual([]);
  }

  it('previews each change against the current config, with its digest, writing nothing', async () => {
    const { digest } = await sim.guest(104);
    const r = await call(client(), 'pve_set_vm_config', {
      node: 'pve2',
      vmid: 104,
      config: {
        memory: 16384,
        cores: 8,
        net1: 'virtio,bridge=vmbr0,tag=30',
        onboot: true,
        tags: 'lab;windows;big',
      },
      delete: ['agent'],
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      request: {
        method: 'POST',
        path: '/nodes/pve2/qemu/104/config',
        params: {
          memory: '16384',
          cores: '8',
          net1: 'virtio,bridge=vmbr0,tag=30',
          onboot: '1',
          tags: 'lab;windows;big',
          delete: 'agent',
        },
      },
      details: { digest },
    });
    expect(r.structuredContent!.details.changes).toEqual([
      { key: 'memory', from: '8192', to: '16384' },
      { key: 'cores', from: '4', to: '8' },
      { key: 'net1', from: '(not set)', to: 'virtio,bridge=vmbr0,tag=30' },
      { key: 'onboot', from: '(not set)', to: '1' },
      { key: 'tags', from: 'lab;windows', to: 'lab;windows;big' },
      { key: 'agent', from: '1', to: '(removed)' },
    ]);
    expect(text(r)).toMatch(/Changes: memory: 8192 → 16384; cores: 4 → 8;/);
    expect(await sim.writes()).toEqual([]);
  });

  it('changes a VM as a task, guarded by the digest, and the config holds the change', async () => {
    const { digest } = await sim.guest(104);
    const r = await call(client(), 'pve_set_vm_config', {
      node: 'pve2',
      vmid: 104,
      config: { memory: 16384, net1: 'virtio,bridge=vmbr0' },
      digest,
      confirm: true,
      wait: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'started',
      upid: expect.stringMatching(/:qmconfig:104:/),
      task: { succeeded: true },
    });
    const [post] = await sim.writes();
    expect(post!.params).toEqual({ memory: '16384', net1: 'virtio,bridge=vmbr0', digest });
    expect((await sim.guest(104)).config).toMatchObject({
      memory: '16384',
      net1: expect.stringMatching(/^virtio=[0-9A-F:]+,bridge=vmbr0$/),
    });
  });

  it('refuses a digest from before a change, naming the current one', async () => {
    const stale = 'a'.repeat(40);
    const { digest } = await sim.guest(104);
    await refused(
      { node: 'pve2', vmid: 104, config: { memory: 2048 }, digest: stale },
      'conflict',
      new RegExp(`changed since it was read \\(its digest is now ${digest}\\)`),
    );
  });

  it('changes a container at once, and leaves a config already as asked alone', async () => {
    const r = await call(client(), 'pve_set_vm_config', {
      node: 'pve1',
      vmid: 110,
      vm_type: 'lxc',
      config: { memory: 1024, net0: 'name=eth0,bridge=vmbr1,ip=dhcp' },
      confirm: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'applied',
      request: { method: 'PUT', path: '/nodes/pve1/lxc/110/config' },
    });
    expect((await sim.guest(110)).config).toMatchObject({
      memory: '1024',
      net0: expect.stringMatching(/bridge=vmbr1/),
    });
    await sim.clearLog();
    const again = await call(client(), 'pve_set_vm_config', {
      node: 'pve1',
      vmid: 110,
      vm_type: 'lxc',
      config: { memory: 1024 },
      confirm: true,
    });
    expect(again.structuredContent).toMatchObject({ mode: 'unchanged' });
    expect(await sim.writes()).toEqual([]);
  });

  it('adds a new disk, and keeps an existing one only in its own slot', async () => {
    const r = await call(client(), 'pve_set_vm_config', {
      node: 'pve1',
      vmid: 100,
      config: { scsi1: 'local-lvm:16,discard=on', scsi0: 'local-lvm:vm-100-disk-0,discard=on' },
      confirm: true,
      wait: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    const vm = await sim.guest(100);
    expect(vm.config.scsi1).toMatch(/^local-lvm:vm-100-disk-1,discard=on,size=16G$/);
    expect(vm.config.scsi0).toMatch(/discard=on/);
    await sim.clearLog();
    await refused(
      { node: 'pve1', vmid: 100, config: { scsi2: 'local-lvm:vm-101-disk-0' } },
      'conflict',
      /config\.scsi2: local-lvm:vm-101-disk-0 is not the volume in scsi2 now \(it is empty\); attaching existing volumes/,
    );
    await refused(
      { node: 'pve1', vmid: 100, config: { scsi0: 'local-lvm:vm-100-disk-0,size=100G' } },
      'conflict',
      /grow a disk with pve_resize_disk/,
    );
  });

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      'a container key on a VM',
      { node: 'pve1', vmid: 100, config: { hostname: 'x' } },
      'config.hostname',
      /not a config option of a VM/,
    ],
    [
      'a VM NIC on a container',
      { node: 'pve1', vmid: 110, vm_type: 'lxc', config: { net0: 'virtio,bridge=vmbr0' } },
      'config.net0',
      /a container NIC is written name=eth0,bridge=vmbr0,ip=dhcp/,
    ],
    [
      'deleting a refused key',
      { node: 'pve1', vmid: 100, delete: ['args'] },
      'delete',
      /args: refused: raw QEMU arguments reach the host/,
    ],
    [
      'a key both set and deleted',
      { node: 'pve1', vmid: 100, config: { memory: 1024 }, delete: ['memory'] },
      'delete',
      /memory is both set and deleted/,
    ],
    [
      'nothing to change',
      { node: 'pve1', vmid: 100, config: {} },
      'config',
      /give config \(keys to set\) or delete/,
    ],
  ])('refuses %s before reading or sending anything', async (_label, args, field, message) => {
    const r = await call(client(), 'pve_set_vm_config', { ...args, confirm: true });
    expect(r.structuredContent!.error).toMatchObject({
      kind: 'invalid_arguments',
      fields: [{ field, message: expect.stringMatching(message) }],
    });
    expect(await sim.requests()).toEqual([]);
  });

  it('keeps config.cipassword out of results, log lines and the audit trail', async () => {
    const logs: string[] = [];
    const spy = vi
      .spyOn(console, 'log')
      .mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' ')));
    let results: unknown[] = [];
    try {
      const args = { node: 'pve1', vmid: 9000, config: { cipassword: PASSWORD, ciuser: 'ops' } };
      results = [
        await call(client(), 'pve_set_vm_config', args),
        await call(client(), 'pve_set_vm_config', { ...args, confirm: true, wait: true }),
      ];
    } finally {
      spy.mockRestore();
    }
    expect(
      (results[0] as { structuredContent: { request: { params: Record<string, string> } } })
        .structuredContent.request.params.cipassword,
    ).toBe('[redacted]');
    expect((await sim.writes())[0]!.params!.cipassword).toBe(PASSWORD);
    const ids = logs
      .filter((l) => l.includes('"msg":"tool_call"'))
      .map((l) => (JSON.parse(l) as { request_id: string }).request_id);
    const records = await auditRecords((r) => ids.includes(r.request_id), 2);
    expect(records.map((r) => r.args.config)).toEqual([
      { cipassword: '[redacted]', ciuser: 'ops' },
      { cipassword: '[redacted]', ciuser: 'ops' },
    ]);
    for (const shown of [JSON.stringify(results), ...logs, JSON.stringify(records)])
      expect(shown).not.toContain(PASSWORD);
  });
});
