// pve_clone_vm over /mcp against the simulator: the preview lists every request and writes
// nothing; a confirmed clone of the cloud-init template with cloud-init, a resize and a start ends
// with a running VM whose config holds the settings; a failure injected at each later step says
// what exists and what did not happen; what Proxmox would refuse is refused before sending; the
// cloud-init password reaches no result, log line or audit record.

import { describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auditRecords } from '../../support/worker/audit';
import { call, text } from '../../support/worker/mcp';
import { simSession } from '../../support/worker/session';
import { sim, type SimFault } from '../../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../../support/worker/policy';

usePolicy(OPEN_POLICY);

const KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@example.com';
const PASSWORD = 'Sup3r-secret-pw';
const CLOUD = {
  node: 'pve1',
  source_vmid: 9000,
  name: 'web-01',
  ciuser: 'alice',
  cipassword: PASSWORD,
  sshkeys: KEY,
  ipconfig0: 'ip=10.0.0.50/24,gw=10.0.0.1',
  nameserver: '10.0.0.53',
  searchdomain: 'example.com',
  cores: 4,
  memory: 4096,
  resize: '+10G',
  start: true,
};

async function nextFree(): Promise<number> {
  const res = await sim.api('GET', '/cluster/nextid');
  return Number(((await res.json()) as { data: string }).data);
}

describe('pve_clone_vm', () => {
  const session = simSession();
  const client = (): Client => session.client;

  it('previews every request in order, with the id and the disk it will use, writing nothing', async () => {
    const id = await nextFree();
    await sim.clearLog();
    const r = await call(client(), 'pve_clone_vm', CLOUD);
    expect(r.isError, text(r)).toBeFalsy();
    const at = `/nodes/pve1/qemu/${id}`;
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      node: 'pve1',
      vmid: id,
      vmid_source: 'next_free',
    });
    expect(
      r.structuredContent!.steps.map(
        (s: { request: { method: string; path: string } }) =>
          `${s.request.method} ${s.request.path}`,
      ),
    ).toEqual([
      'POST /nodes/pve1/qemu/9000/clone',
      `POST ${at}/config`,
      `PUT ${at}/resize`,
      `POST ${at}/status/start`,
    ]);
    const sent = r.structuredContent!.steps[1].request.params as Record<string, string>;
    // Public keys are shown as they will be sent (URL-encoded, as PVE stores them).
    expect(decodeURIComponent(sent.sshkeys!)).toBe(KEY);
    expect(sent).toEqual({
      ciuser: 'alice',
      cipassword: '[redacted]',
      sshkeys: sent.sshkeys,
      ipconfig0: 'gw=10.0.0.1,ip=10.0.0.50/24',
      nameserver: '10.0.0.53',
      searchdomain: 'example.com',
      cores: '4',
      memory: '4096',
    });
    expect(r.structuredContent!.steps[2].request.params).toEqual({ disk: 'scsi0', size: '+10G' });
    expect(text(r)).toMatch(/^Preview only: nothing was sent to Proxmox\./);
    expect(text(r)).toMatch(/A linked clone of template VM 9000 \(debian-13-cloudinit\)/);
    expect(text(r)).toMatch(/scsi0 goes from 3\.5 GiB to 13\.5 GiB/);
    expect(JSON.stringify(r)).not.toContain(PASSWORD);
    expect(await sim.writes()).toEqual([]);
  });

  it('clones with cloud-init, grows the disk and starts: a running VM holding the settings', async () => {
    const id = await nextFree();
    const r = await call(client(), 'pve_clone_vm', {
      ...CLOUD,
      confirm: true,
      wait: true,
      timeout_s: 30,
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'created',
      vmid: id,
      completed: true,
      upid: expect.stringMatching(/:qmclone:9000:/),
    });
    expect(r.structuredContent!.steps.map((s: { status: string }) => s.status)).toEqual([
      'done',
      'done',
      'done',
      'done',
    ]);
    expect(text(r)).toMatch(
      new RegExp(
        `^VM ${id} was cloned from VM 9000; its ciuser, cipassword, sshkeys, ipconfig0, nameserver, searchdomain, cores, memory were set; scsi0 was grown by 10G; VM ${id} was started\\.$`,
      ),
    );
    const vm = await sim.guest(id);
    expect(vm).toMatchObject({ status: 'running', node: 'pve1' });
    expect(vm.config).toMatchObject({
      name: 'web-01',
      ciuser: 'alice',
      ipconfig0: 'gw=10.0.0.1,ip=10.0.0.50/24',
      nameserver: '10.0.0.53',
      searchdomain: 'example.com',
      cores: '4',
      memory: '4096',
    });
    expect(decodeURIComponent(vm.config.sshkeys!)).toBe(KEY);
    expect(vm.config.cipassword).toMatch(/^\$5\$/);
    expect(vm.config.scsi0).toMatch(/size=13824M/);
    expect(
      (await sim.writes()).map((w) => `${w.method} ${w.path.replace('/api2/json', '')}`),
    ).toEqual([
      'POST /nodes/pve1/qemu/9000/clone',
      `POST /nodes/pve1/qemu/${id}/config`,
      `PUT /nodes/pve1/qemu/${id}/resize`,
      `POST /nodes/pve1/qemu/${id}/status/start`,
    ]);
  });

  const FAILURES: [string, SimFault, string, RegExp][] = [
    [
      'the config write (HTTP 500)',
      {
        method: 'POST',
        path: '/qemu/\\d+/config$',
        status: 500,
        contentType: 'application/json;charset=UTF-8',
        body: { data: null, message: 'storage cloudinit busy\n' },
      },
      'config',
      /\. Setting ciuser, .* failed: Proxmox reported an error \(500\): storage cloudinit busy Not done: growing scsi0 of VM \d+ by 10G; starting VM \d+\./,
    ],
    [
      'the config task',
      { path: '/qemu/\\d+/config$', taskExitStatus: 'cloud-init drive regeneration failed' },
      'config',
      /Setting ciuser, .* failed: The task failed: cloud-init drive regeneration failed\. Not done: growing scsi0/,
    ],
    [
      'the resize task',
      { path: '/resize$', taskExitStatus: 'lvextend failed' },
      'resize',
      /were set\. Growing scsi0 of VM \d+ by 10G failed: The task failed: lvextend failed\. Not done: starting VM \d+\./,
    ],
    [
      'the start (HTTP 500)',
      {
        method: 'POST',
        path: '/status/start$',
        status: 500,
        contentType: 'application/json;charset=UTF-8',
        body: { data: null, message: 'no free memory\n' },
      },
      'start',
      /scsi0 was grown by 10G\. Starting VM \d+ failed: Proxmox reported an error \(500\): no free memory VM \d+ exists/,
    ],
  ];

  it.each(FAILURES)(
    'reports what exists when %s fails, and what did not happen',
    async (_label, fault, failedAt, message) => {
      const id = await nextFree();
      await sim.fault(fault);
      const r = await call(client(), 'pve_clone_vm', {
        ...CLOUD,
        confirm: true,
        wait: true,
        timeout_s: 30,
      });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ mode: 'created', vmid: id, completed: false });
      expect(text(r)).toMatch(new RegExp(`^VM ${id} was cloned from VM 9000`));
      expect(text(r)).toMatch(message);
      expect(text(r)).toMatch(new RegExp(`VM ${id} exists: check it with pve_get_vm_config`));
      const statuses = r.structuredContent!.steps.map((s: { status: string }) => s.status);
      const order = ['clone', 'config', 'resize', 'start'];
      expect(statuses).toEqual(
        order.map((step, i) =>
          i < order.indexOf(failedAt) ? 'done' : step === failedAt ? 'failed' : 'not_run',
        ),
      );
      const vm = await sim.guest(id);
      expect(vm.status).toBe('stopped');
      // The template's own cloud-init user stays until the config write succeeds.
      expect(vm.config.ciuser).toBe(failedAt === 'config' ? 'debian' : 'alice');
    },
  );

  it('reports a clone task that failed as nothing created', async () => {
    const id = await nextFree();
    await sim.fault({ path: '/clone$', taskExitStatus: 'clone failed: storage full' });
    const r = await call(client(), 'pve_clone_vm', { ...CLOUD, confirm: true, wait: true });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ mode: 'failed', completed: false });
    expect(text(r)).toMatch(
      /^Cloning VM 9000 to VM \d+ failed: The task failed: clone failed: storage full\. Not done: setting ciuser/,
    );
    await expect(sim.guest(id)).rejects.toThrow(/404/);
  });

  it('takes the next free id when the one it chose was taken meanwhile, and runs every step on that one', async () => {
    const taken = await nextFree();
    expect((await sim.api('POST', '/nodes/pve1/qemu', { vmid: String(taken) })).status).toBe(200);
    await sim.clearLog();
    // The simulator offers the taken id twice (to the policy's read and to the run's).
    await sim.fault({
      method: 'GET',
      path: '^/cluster/nextid$',
      times: 2,
      status: 200,
      contentType: 'application/json;charset=UTF-8',
      body: { data: String(taken) },
    });
    const r = await call(client(), 'pve_clone_vm', {
      node: 'pve1',
      source_vmid: 9000,
      ciuser: 'carol',
      confirm: true,
      wait: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    const id = r.structuredContent!.vmid as number;
    expect(id).toBeGreaterThan(taken);
    const writes = (await sim.writes()).map((w) =>
      [w.method, w.path.replace('/api2/json', ''), w.params?.newid, w.status]
        .filter((x) => x !== undefined)
        .join(' '),
    );
    expect(writes[0]).toBe(`POST /nodes/pve1/qemu/9000/clone ${taken} 500`);
    expect(writes.slice(-2)).toEqual([
      `POST /nodes/pve1/qemu/9000/clone ${id} 200`,
      `POST /nodes/pve1/qemu/${id}/config 200`,
    ]);
    expect((await sim.guest(id)).config.ciuser).toBe('carol');
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a linked clone of a VM that is not a template',
      { node: 'pve1', source_vmid: 100, full: false },
      /A linked clone needs a template, and VM 100 \(web01\) is not one/,
    ],
    [
      'a storage for a linked clone',
      { node: 'pve1', source_vmid: 9000, storage: 'local-lvm' },
      /storage applies to full copies only/,
    ],
    [
      'cloud-init for a VM without a cloud-init drive',
      { node: 'pve1', source_vmid: 100, ciuser: 'bob' },
      /VM 100 \(web01\) has no cloud-init drive/,
    ],
    [
      'a resize that would shrink',
      { node: 'pve1', source_vmid: 9000, resize: '2G' },
      /Proxmox only grows disks: scsi0 is 3\.5 GiB in VM 9000/,
    ],
    [
      'a resize of a disk it does not have',
      { node: 'pve1', source_vmid: 9000, resize: '+1G', resize_disk: 'virtio3' },
      /has no disk virtio3 to grow/,
    ],
  ])('refuses %s before sending anything', async (_label, args, message) => {
    const r = await call(client(), 'pve_clone_vm', { ...args, confirm: true });
    expect(r.isError).toBe(true);
    expect(r.structuredContent!.error).toMatchObject({ kind: 'conflict' });
    expect(text(r)).toMatch(message);
    expect(text(r)).toMatch(/Nothing was sent to Proxmox\.$/);
    expect(await sim.writes()).toEqual([]);
  });

  it('makes a full copy of a running VM onto another storage without waiting', async () => {
    const r = await call(client(), 'pve_clone_vm', {
      node: 'pve1',
      source_vmid: 100,
      newid: 5100,
      full: true,
      storage: 'local-lvm',
      pool: 'lab',
      confirm: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      vmid: 5100,
      vmid_source: 'given',
      completed: true,
      steps: [{ status: 'started' }],
    });
    const [post] = await sim.writes();
    expect(post!.params).toEqual({ newid: '5100', full: '1', storage: 'local-lvm', pool: 'lab' });
  });

  it('keeps the cloud-init password out of results, log lines and the audit trail', async () => {
    const logs: string[] = [];
    const spy = vi
      .spyOn(console, 'log')
      .mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' ')));
    let results: unknown[] = [];
    try {
      results = [
        await call(client(), 'pve_clone_vm', CLOUD),
        await call(client(), 'pve_clone_vm', {
          ...CLOUD,
          confirm: true,
          wait: true,
          timeout_s: 30,
        }),
      ];
    } finally {
      spy.mockRestore();
    }
    const ids = logs
      .filter((l) => l.includes('"msg":"tool_call"'))
      .map((l) => (JSON.parse(l) as { request_id: string }).request_id);
    expect(ids).toHaveLength(2);
    const records = await auditRecords((r) => ids.includes(r.request_id), 2);
    expect(records.map((r) => r.args.cipassword)).toEqual(['[redacted]', '[redacted]']);
    expect(records[1]).toMatchObject({
      tool: 'pve_clone_vm',
      outcome: 'ok',
      vmid: expect.any(Number),
      upid: expect.stringMatching(/:qmclone:/),
    });
    for (const shown of [JSON.stringify(results), ...logs, JSON.stringify(records)])
      expect(shown).not.toContain(PASSWORD);
  });
});
