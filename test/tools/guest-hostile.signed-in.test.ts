// Hostile inputs to the guest-agent and backup tools: argv smuggling (a shell behind env, a path
// to one, busybox, spaces, NUL and control characters in the program), file paths (.., //, ., a
// path through /proc, very long), a vmid list, volume ids of another storage or kind, restore
// archives that are not backups. Each is refused, naming the field (or the policy rule), and
// nothing is written to Proxmox; a field error sends nothing at all.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { asEditor, connectSignedIn } from '../support/worker/oauth';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { GUEST_POLICY } from '../support/policies/guest';
import { usePolicy } from '../support/worker/policy';

usePolicy(GUEST_POLICY, asEditor());

/** A field the error names, or `policy` for a refusal by a rule. */
type Row = [tool: string, label: string, args: Record<string, unknown>, refusedBy: string];

const VM = { node: 'pve1', vmid: 100 };
const EXEC = { ...VM, confirm: true };
const BACKUP = 'local:backup/vzdump-qemu-100-2026_11_30-02_00_07.vma.zst';

const ROWS: Row[] = [
  [
    'pve_guest_exec',
    'an empty argument (Proxmox would drop what precedes it)',
    { ...EXEC, command: ['echo', '', 'sh', '-c', 'id'] },
    'command.1',
  ],
  [
    'pve_guest_exec',
    'a trailing dot (Windows drops it)',
    { ...EXEC, command: ['cmd.exe.'] },
    'command.0',
  ],
  [
    'pve_guest_exec',
    'a shell line as the program',
    { ...EXEC, command: ['sh -c id'] },
    'command.0',
  ],
  ['pve_guest_exec', 'a NUL in the program', { ...EXEC, command: ['echo\u0000sh'] }, 'command.0'],
  [
    'pve_guest_exec',
    'a NUL in an argument',
    { ...EXEC, command: ['echo', 'a\u0000b'] },
    'command.1',
  ],
  [
    'pve_guest_exec',
    'an escape character in an argument',
    { ...EXEC, command: ['echo', '\u001b[2J'] },
    'command.1',
  ],
  ['pve_guest_exec', 'shell syntax in the program', { ...EXEC, command: ['$(id)'] }, 'command.0'],
  ['pve_guest_exec', '.. in the program', { ...EXEC, command: ['../../bin/sh'] }, 'command.0'],
  ['pve_guest_exec', 'an empty argv', { ...EXEC, command: [] }, 'command'],
  ['pve_guest_exec', 'a command line as a string', { ...EXEC, command: 'echo hi' }, 'command'],
  ['pve_guest_exec', '65 parts', { ...EXEC, command: ['echo', ...Array(64).fill('x')] }, 'command'],
  [
    'pve_guest_exec',
    'stdin over 64 KiB',
    { ...EXEC, command: ['cat'], input_data: 'x'.repeat(65_537) },
    'input_data',
  ],
  [
    'pve_guest_exec',
    'a timeout over 300 s',
    { ...EXEC, command: ['echo'], timeout_s: 301 },
    'timeout_s',
  ],
  ['pve_guest_exec', 'a vmid list', { ...EXEC, vmid: '100,101', command: ['echo'] }, 'vmid'],
  [
    'pve_guest_exec',
    'node path traversal',
    { ...EXEC, node: '../pve1', command: ['echo'] },
    'node',
  ],
  [
    'pve_guest_exec',
    'vm_type to reach a container',
    { ...EXEC, vm_type: 'lxc', command: ['echo'] },
    'vm_type',
  ],
  [
    'pve_guest_exec',
    'a shell hidden in env',
    { ...EXEC, command: ['env', 'sh', '-c', 'id'] },
    'policy',
  ],
  [
    'pve_guest_exec',
    'a shell by its path',
    { ...EXEC, command: ['/usr/bin/sh', '-c', 'id'] },
    'policy',
  ],
  ['pve_guest_exec', 'a shell in the current directory', { ...EXEC, command: ['./sh'] }, 'policy'],
  ['pve_guest_exec', 'busybox sh', { ...EXEC, command: ['busybox', 'sh', '-c', 'id'] }, 'policy'],
  [
    'pve_guest_exec',
    'an interpreter',
    { ...EXEC, command: ['/usr/bin/python3.12', '-c', '1'] },
    'policy',
  ],
  [
    'pve_guest_file_read',
    'a backslash climbing out on Windows',
    { ...VM, file: '/var/log/..\\..\\Windows\\x' },
    'file',
  ],
  ['pve_guest_file_read', '.. in the path', { ...VM, file: '/var/log/../../etc/shadow' }, 'file'],
  ['pve_guest_file_read', '// at the start', { ...VM, file: '//etc/shadow' }, 'file'],
  ['pve_guest_file_read', 'a . segment', { ...VM, file: '/etc/./shadow' }, 'file'],
  ['pve_guest_file_read', 'a relative path', { ...VM, file: 'etc/shadow' }, 'file'],
  ['pve_guest_file_read', 'a NUL', { ...VM, file: '/var/log/syslog\u0000/etc/shadow' }, 'file'],
  ['pve_guest_file_read', 'a newline', { ...VM, file: '/var/log/syslog\n' }, 'file'],
  [
    'pve_guest_file_read',
    'a very long path',
    { ...VM, file: `/var/log/${'a/'.repeat(600)}x` },
    'file',
  ],
  ['pve_guest_file_read', 'a trailing slash', { ...VM, file: '/etc/' }, 'file'],
  [
    'pve_guest_file_read',
    'the root through /proc',
    { ...VM, file: '/proc/self/root/etc/shadow' },
    'policy',
  ],
  ['pve_guest_file_read', '/etc/shadow', { ...VM, file: '/etc/shadow' }, 'policy'],
  [
    'pve_guest_file_read',
    'a private key',
    { ...VM, file: '/home/deploy/.ssh/id_ed25519' },
    'policy',
  ],
  ['pve_guest_info', 'node path traversal', { ...VM, node: 'pve1/../..' }, 'node'],
  ['pve_guest_info', 'node with a query', { ...VM, node: 'pve1?x=1' }, 'node'],
  ['pve_guest_info', 'a vmid list', { ...VM, vmid: '100,101' }, 'vmid'],
  ['pve_guest_info', 'vmid below range', { ...VM, vmid: 99 }, 'vmid'],
  ['pve_guest_info', 'vmid fractional', { ...VM, vmid: 100.5 }, 'vmid'],
  ['pve_guest_info', 'vm_type', { ...VM, vm_type: 'lxc' }, 'vm_type'],
  ['pve_guest_info', 'an argument it does not take', { ...VM, command: ['id'] }, 'command'],
  ['pve_guest_info', 'node empty', { ...VM, node: '' }, 'node'],
  ['pve_guest_info', 'node percent-encoded', { ...VM, node: '%2e%2e' }, 'node'],
  ['pve_guest_info', 'vmid as a string', { ...VM, vmid: '100' }, 'vmid'],
  ...backupRows(),
];

function backupRows(): Row[] {
  const c = { node: 'pve1', vmid: 100, storage: 'local', confirm: true };
  const r = { node: 'pve1', volume: BACKUP, confirm: true };
  const d = { node: 'pve1', volume: BACKUP, confirm: true };
  return [
    ['pve_create_backup', 'a vmid list', { ...c, vmid: '100,101' }, 'vmid'],
    ['pve_create_backup', 'all guests', { ...c, all: true }, 'all'],
    ['pve_create_backup', 'a storage path', { ...c, storage: '../local' }, 'storage'],
    ['pve_create_backup', 'a mode PVE lacks', { ...c, mode: 'live' }, 'mode'],
    ['pve_create_backup', 'compress smuggling', { ...c, compress: 'zstd&remove=1' }, 'compress'],
    ['pve_create_backup', 'notes on two lines', { ...c, notes: 'a\nb' }, 'notes'],
    ['pve_create_backup', 'notes with a NUL', { ...c, notes: 'a\u0000b' }, 'notes'],
    ['pve_create_backup', 'a dumpdir', { ...c, dumpdir: '/tmp' }, 'dumpdir'],
    ['pve_create_backup', 'a hook script', { ...c, script: '/root/x.sh' }, 'script'],
    ['pve_create_backup', 'node traversal', { ...c, node: '../pve1' }, 'node'],
    ['pve_create_backup', 'protected as a string', { ...c, protected: '1' }, 'protected'],
    ['pve_create_backup', 'a storage without backups', { ...c, storage: 'local-lvm' }, 'conflict'],
    ['pve_restore_backup', 'a disk image', { ...r, volume: 'local-lvm:vm-100-disk-0' }, 'volume'],
    [
      'pve_restore_backup',
      'an ISO',
      { ...r, volume: 'local:iso/debian-13.1.0-amd64-netinst.iso' },
      'volume',
    ],
    [
      'pve_restore_backup',
      'a template',
      { ...r, volume: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst' },
      'volume',
    ],
    [
      'pve_restore_backup',
      'a path out of the backup directory',
      { ...r, volume: 'local:backup/../../etc/pve/storage.cfg' },
      'volume',
    ],
    [
      'pve_restore_backup',
      'an absolute path',
      { ...r, volume: '/var/lib/vz/dump/vzdump-qemu-100.vma.zst' },
      'volume',
    ],
    [
      'pve_restore_backup',
      'a parameter after the volume',
      { ...r, volume: `${BACKUP}&force=1` },
      'volume',
    ],
    ['pve_restore_backup', 'a second archive', { ...r, volume: `${BACKUP},${BACKUP}` }, 'volume'],
    [
      'pve_restore_backup',
      'a PBS name with ..',
      { ...r, volume: 'pbs-backup:backup/vm/../ct/110/2026-11-30T02:00:07Z' },
      'volume',
    ],
    ['pve_restore_backup', 'a vmid list', { ...r, vmid: '106,107' }, 'vmid'],
    ['pve_restore_backup', 'a storage path', { ...r, storage: 'local-lvm/../x' }, 'storage'],
    ['pve_restore_backup', 'force as a string', { ...r, force: 'yes' }, 'force'],
    ['pve_restore_backup', 'unique (not taken)', { ...r, unique: true }, 'unique'],
    [
      'pve_restore_backup',
      'a backup that is not there (its preview: a confirmed restore asks a lead first)',
      { ...r, confirm: false, volume: 'local:backup/vzdump-qemu-100-2020_01_01-00_00_00.vma.zst' },
      'conflict',
    ],
    ['pve_delete_backup', 'a disk image', { ...d, volume: 'local-lvm:vm-100-disk-0' }, 'volume'],
    [
      'pve_delete_backup',
      'an ISO',
      { ...d, volume: 'local:iso/debian-13.1.0-amd64-netinst.iso' },
      'volume',
    ],
    [
      'pve_delete_backup',
      'a path out of the backup directory',
      { ...d, volume: 'local:backup/../images/100/vm-100-disk-0.raw' },
      'volume',
    ],
    [
      'pve_delete_backup',
      'a storage id with a slash',
      { ...d, volume: 'loc/al:backup/vzdump-qemu-100-2026_11_30-02_00_07.vma.zst' },
      'volume',
    ],
    [
      'pve_delete_backup',
      'a query in the volume',
      { ...d, volume: `${BACKUP}?delay=30` },
      'volume',
    ],
    ['pve_delete_backup', 'an empty volume', { ...d, volume: '' }, 'volume'],
    ['pve_delete_backup', 'a volume list', { ...d, volume: [BACKUP] }, 'volume'],
    ['pve_delete_backup', 'node traversal', { ...d, node: '../../' }, 'node'],
    [
      'pve_delete_backup',
      'an argument it does not take (storage)',
      { ...d, storage: 'local' },
      'storage',
    ],
    [
      'pve_delete_backup',
      'a very long volume',
      { ...d, volume: `local:backup/${'x'.repeat(400)}` },
      'volume',
    ],
    [
      'pve_delete_backup',
      'a backup not on that storage',
      { ...d, volume: 'local:backup/vzdump-qemu-999-2026_11_30-02_00_07.vma.zst' },
      'conflict',
    ],
  ];
}

let client: Client;
beforeAll(async () => {
  await sim.reset();
  client = (
    await connectSignedIn('http', {
      user: 'olga@example.com',
      groups: 'ops',
      scopes: ['pve:read', 'pve:operate', 'pve:provision', 'pve:guest'],
    })
  ).client;
});
afterAll(() => client.close());

describe('hostile inputs to the guest-agent and backup tools', () => {
  it('has at least 10 rows for every one of these tools', () => {
    const perTool = new Map<string, number>();
    for (const [tool] of ROWS) perTool.set(tool, (perTool.get(tool) ?? 0) + 1);
    expect([...perTool.keys()].sort()).toEqual([
      'pve_create_backup',
      'pve_delete_backup',
      'pve_guest_exec',
      'pve_guest_file_read',
      'pve_guest_info',
      'pve_restore_backup',
    ]);
    for (const n of perTool.values()) expect(n).toBeGreaterThanOrEqual(10);
  });

  it.each(ROWS)('%s: %s → refused, nothing written', async (tool, _label, args, refusedBy) => {
    await sim.clearLog();
    const result = await call(client, tool, args);
    expect(result.isError, text(result)).toBe(true);
    const sc = result.structuredContent as {
      error?: { kind: string; fields?: { field: string }[] };
      policy?: { decision: string };
    };
    if (refusedBy === 'policy') {
      expect(sc.policy?.decision).toBe('deny');
      expect(await sim.requests()).toEqual([]);
    } else if (refusedBy === 'conflict') {
      expect(sc.error?.kind).toBe('conflict');
      expect(text(result)).toMatch(/Nothing was sent\.$/);
    } else {
      expect(sc.error?.kind).toBe('invalid_arguments');
      expect(sc.error?.fields?.map((f) => f.field)).toContain(refusedBy);
      expect(await sim.requests()).toEqual([]);
    }
    expect(await sim.writes()).toEqual([]);
  });
});
