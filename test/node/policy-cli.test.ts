// `npm run policy -- check|explain`: validates a policy file and explains a decision offline.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'policy-cli-'));

function run(...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/policy.ts', ...args], { cwd: root, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function file(name: string, doc: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return p;
}

describe('npm run policy -- check', () => {
  it('accepts the bundled policy.json', () => {
    const r = run('check', 'policy.json');
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/policy\.json: valid \(default deny/);
  });

  it('lists every error with its JSON pointer and exits 1', () => {
    const r = run('check', file('bad.json', { version: '1', default: 'deny', tools: { pve_list_vm: {}, pve_create_qemu_vm: { deny_if: [{ path: 'args.ram', op: 'gt', value: 1 }], limits: [{ counter: 'c', window: 'week', max: 1, scope: 'grant' }] } } }));
    expect(r.status).toBe(1);
    expect(r.out).toContain('invalid policy (3 errors)');
    expect(r.out).toContain('/tools/pve_list_vm: unknown tool "pve_list_vm"');
    expect(r.out).toContain('/tools/pve_create_qemu_vm/deny_if/0/path: unknown argument "ram"');
    expect(r.out).toContain('/tools/pve_create_qemu_vm/limits/0/window:');
  });

  it('warns when the policy has no default (it then denies every unlisted tool)', () => {
    const r = run('check', file('nodefault.json', { version: '1', tools: { pve_list_vms: {} } }));
    expect(r.status).toBe(0);
    expect(r.out).toContain('warning: /default: no "default": every tool not listed under "tools" is denied');
    expect(r.out).toMatch(/valid \(default deny/);
  });

  it('says when the file is not JSON', () => {
    const r = run('check', file('nojson.json', '{ version: 1'));
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/nojson\.json: .*JSON/);
  });
});

describe('npm run policy -- explain', () => {
  it.each<[string, object, number, RegExp]>([
    ['an allowed list', { tool: 'pve_list_vms' }, 0, /"kind": "allow"/],
    ['a default-denied tool', { tool: 'pve_delete_vm' }, 3, /"rule": "\(default deny\)"/],
    ['a memory cap on a property of the call', { tool: 'pve_create_qemu_vm', args: { node: 'pve1', memory: 65536 } }, 3, /"rule": "\/tools\/pve_create_qemu_vm\/deny_if\/0"/],
    ['a disk cap inside the scsi0 property string', { tool: 'pve_create_qemu_vm', args: { node: 'pve1', scsi0: 'local-lvm:4096' } }, 3, /deny_if\/3"[\s\S]*512 GiB/],
    ['a full counter, with the retry time', { tool: 'pve_create_qemu_vm', args: { node: 'pve1', confirm: true }, counters: { pve_create_qemu_vm_rate: 30 }, now: '2026-11-30T12:00:45Z' }, 3, /"kind": "limited"[\s\S]*"retry_after_s": 15/],
    ['a counter below its max', { tool: 'pve_create_qemu_vm', args: { node: 'pve1' }, counters: { pve_create_qemu_vm_rate: 29 } }, 0, /"kind": "allow"/],
    ['a start (limited per person)', { tool: 'pve_start_vm', args: { node: 'pve1', vmid: 104, confirm: true } }, 0, /"kind": "allow"[\s\S]*"counter": "power_actions"/],
    ['a hard stop, which needs a person', { tool: 'pve_stop_vm', args: { node: 'pve1', vmid: 104, confirm: true } }, 3, /"kind": "approval_required"[\s\S]*"rule": "\/tools\/pve_stop_vm\/action"/],
    ['a rollback, which needs a person', { tool: 'pve_rollback_snapshot', args: { node: 'pve1', vmid: 104, snapname: 'before', confirm: true } }, 3, /approval_required/],
    ['a snapshot read', { tool: 'pve_list_snapshots', args: { node: 'pve1', vmid: 104 } }, 0, /"kind": "allow"/],
  ])('explains %s', (_label, callJson, status, out) => {
    const r = run('explain', 'policy.json', JSON.stringify(callJson));
    expect(r.out).toMatch(out);
    expect(r.status).toBe(status);
  });

  it('explains a require on an argument the call leaves out as a denial, and notes what the server fills in', () => {
    const policy = file('require.json', {
      version: '1',
      tools: { pve_create_qemu_vm: { require: [{ path: 'args.pool', op: 'eq', value: 'agents' }], deny_if: [{ path: 'args.vmid', op: 'lt', value: 1000 }] } },
    });
    const absent = run('explain', policy, JSON.stringify({ tool: 'pve_create_qemu_vm', args: { node: 'pve1' } }));
    expect(absent.status).toBe(3);
    expect(absent.out).toContain('"rule": "/tools/pve_create_qemu_vm/require/0"');
    expect(absent.out).toContain('args.pool is required (it must satisfy eq \\"agents\\") and this call has none');
    expect(absent.out).toMatch(/note: without "vmid", the server fills it in/);
    const small = run('explain', policy, JSON.stringify({ tool: 'pve_create_qemu_vm', args: { node: 'pve1', pool: 'agents', vmid: 200 } }));
    expect(small.out).toContain('"rule": "/tools/pve_create_qemu_vm/deny_if/0"');
    expect(small.out).not.toMatch(/note:/);
  });

  it('says how a session-scoped limit counts for 2026 clients, which have no session', () => {
    const policy = file('session.json', { version: '1', default: 'deny', tools: { pve_list_vms: { limits: [{ counter: 'l', window: 'hour', max: 5, scope: 'session' }] } } });
    const r = run('explain', policy, JSON.stringify({ tool: 'pve_list_vms' }));
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/note: a session-scoped limit counts per MCP session for 2025 clients; a 2026-07-28 client has no session, so for it the limit counts per OAuth grant/);
  });

  it('refuses arguments the tool itself would refuse', () => {
    const r = run('explain', 'policy.json', JSON.stringify({ tool: 'pve_create_qemu_vm', args: { node: '../x' } }));
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/- node: must be a Proxmox node name/);
  });
});
