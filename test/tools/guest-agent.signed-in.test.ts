// Inside a VM through the QEMU guest agent, over /mcp against the simulator, under a policy that
// allows a few programs (an allow-list, as the shipped policy is: shells and interpreters are off
// it) and lets only ops change services: an allowed command runs and its output comes back; a
// refused one, a preview, a stopped VM or one without an agent sends nothing; output is cut with
// a note; a file is read; what the agent reports about the guest is shown.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { asEditor, connectSignedIn } from '../support/worker/oauth';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { GUEST_POLICY } from '../support/policies/guest';
import { usePolicy } from '../support/worker/policy';

usePolicy(GUEST_POLICY, asEditor());

const VM = { node: 'pve1', vmid: 100 };
let dev: Client;
let ops: Client;

beforeAll(async () => {
  await sim.reset();
  dev = (
    await connectSignedIn('http', {
      user: 'dana@example.com',
      groups: 'dev',
      scopes: ['pve:read', 'pve:operate', 'pve:provision', 'pve:guest'],
    })
  ).client;
  ops = (
    await connectSignedIn('http', {
      user: 'olga@example.com',
      groups: 'ops',
      scopes: ['pve:read', 'pve:operate', 'pve:provision', 'pve:guest'],
    })
  ).client;
});
afterAll(async () => {
  await dev.close();
  await ops.close();
});

const execs = async () =>
  (await sim.writes()).filter((w) => w.path.endsWith('/agent/exec')).map((w) => w.body);

describe('pve_guest_exec', () => {
  it('previews what would run and sends nothing', async () => {
    await sim.clearLog();
    const r = await call(dev, 'pve_guest_exec', { ...VM, command: ['echo', 'hello world'] });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      command: ['echo', 'hello world'],
    });
    expect(text(r)).toContain(
      'Would run in VM 100 (web01) on pve1, as the guest agent\'s user (root on Linux, SYSTEM on Windows), no shell: "echo" "hello world"',
    );
    expect(await sim.writes()).toEqual([]);
  });

  it('runs an allowed program and returns its exit code and output, sending the argv as it is', async () => {
    await sim.clearLog();
    const r = await call(dev, 'pve_guest_exec', {
      ...VM,
      command: ['echo', 'hello world', '; reboot'],
      confirm: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'exited',
      exitcode: 0,
      stdout: 'hello world ; reboot\n',
      stderr: '',
    });
    // One exec, each part its own repeated `command` key: nothing a shell could split.
    expect(await execs()).toEqual(['command=echo&command=hello+world&command=%3B+reboot']);
  });

  it('passes output beyond ASCII through unchanged', async () => {
    const r = await call(dev, 'pve_guest_exec', {
      ...VM,
      command: ['echo', 'café €'],
      confirm: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ exitcode: 0, stdout: 'café €\n' });
  });

  it('sends stdin beyond ASCII as its UTF-8 bytes, and hides its echo, the value being sensitive', async () => {
    await sim.clearLog();
    const stdin = 'café €\n';
    const r = await call(dev, 'pve_guest_exec', {
      ...VM,
      command: ['cat'],
      input_data: stdin,
      confirm: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    // The guest agent reads input-data as bytes, one character each: UTF-8's, not the code points.
    const bytes = String.fromCharCode(...new TextEncoder().encode(stdin));
    expect(await execs()).toEqual([`command=cat&${new URLSearchParams({ 'input-data': bytes })}`]);
    // cat gives the value back, and a value the policy calls sensitive leaves the call nowhere.
    expect(r.structuredContent).toMatchObject({ exitcode: 0, stdout: '[redacted]\n' });
    expect(JSON.stringify(r)).not.toContain('café');
  });

  it('reports a non-zero exit code as the result, not as a failure', async () => {
    const r = await call(dev, 'pve_guest_exec', { ...VM, command: ['false'], confirm: true });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ mode: 'exited', exitcode: 1 });
  });

  it('cuts a long output at 16 KiB and says so', async () => {
    const r = await call(dev, 'pve_guest_exec', {
      ...VM,
      command: ['seq', '1', '100000'],
      confirm: true,
    });
    const out = r.structuredContent as { stdout: string; notes: string[] };
    expect(new TextEncoder().encode(out.stdout).length).toBeLessThanOrEqual(16_384);
    expect(out.stdout.startsWith('1\n2\n3\n')).toBe(true);
    expect(out.notes[0]).toMatch(/^stdout: the first 16384 of \d+ bytes are shown$/);
  });

  it('refuses shells and interpreters however they are spelled, and programs off the list, sending nothing', async () => {
    await sim.clearLog();
    for (const command of [
      ['sh', '-c', 'id'],
      ['/usr/bin/bash', '-c', 'id'],
      ['./sh'],
      ['busybox', 'sh'],
      ['env', 'sh', '-c', 'id'],
      ['python3', '-c', 'print(1)'],
      ['/usr/bin/perl', '-e', '1'],
      ['apt', 'upgrade'],
    ]) {
      const r = await call(ops, 'pve_guest_exec', { ...VM, command, confirm: true });
      expect(r.isError, command.join(' ')).toBe(true);
      expect(r.structuredContent!.policy, command.join(' ')).toMatchObject({ decision: 'deny' });
    }
    expect(await sim.writes()).toEqual([]);
  });

  it('lets only ops change a service (a group-scoped rule)', async () => {
    await sim.clearLog();
    const restart = { ...VM, command: ['systemctl', 'restart', 'nginx'], confirm: true };
    const refused = await call(dev, 'pve_guest_exec', restart);
    expect(refused.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      reason: 'Only ops change services.',
    });
    expect(await sim.writes()).toEqual([]);
    const done = await call(ops, 'pve_guest_exec', restart);
    expect(done.isError, text(done)).toBeFalsy();
    expect(await execs()).toEqual(['command=systemctl&command=restart&command=nginx']);
    const status = await call(dev, 'pve_guest_exec', {
      ...VM,
      command: ['systemctl', 'status', 'nginx'],
      confirm: true,
    });
    expect(status.isError, text(status)).toBeFalsy();
    // Proxmox hands on the agent's bytes one character per byte: they are read back as UTF-8.
    expect((status.structuredContent as { stdout: string }).stdout).toMatch(/^● nginx\.service/);
  });

  it('refuses a stopped VM and one without an agent before sending anything', async () => {
    await sim.clearLog();
    const stopped = await call(dev, 'pve_guest_exec', {
      node: 'pve2',
      vmid: 104,
      command: ['hostname'],
      confirm: true,
    });
    expect(text(stopped)).toMatch(
      /VM 104 \(win11-lab\) is stopped: the guest agent only answers in a running VM/,
    );
    const noAgent = await call(dev, 'pve_guest_exec', {
      node: 'pve2',
      vmid: 103,
      command: ['hostname'],
      confirm: true,
    });
    expect(text(noAgent)).toMatch(/VM 103 \(ci-runner01\) has no QEMU guest agent configured/);
    expect(await sim.writes()).toEqual([]);
  });
});

describe('pve_guest_file_read and pve_guest_info', () => {
  it('reads an allowed file, and refuses /etc/shadow and keys by policy', async () => {
    const r = await call(dev, 'pve_guest_file_read', { ...VM, file: '/etc/os-release' });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ file: '/etc/os-release', truncated: false });
    expect((r.structuredContent as { content: string }).content).toMatch(/^PRETTY_NAME="Debian/m);
    await sim.clearLog();
    for (const file of [
      '/etc/shadow',
      '/root/.ssh/id_ed25519',
      '/proc/self/root/etc/shadow',
      '/home/u/.ssh/id_rsa',
    ]) {
      const refused = await call(dev, 'pve_guest_file_read', { ...VM, file });
      expect(refused.structuredContent!.policy, file).toMatchObject({ decision: 'deny' });
    }
    // Reads only, and none of these reached the agent.
    expect((await sim.requests()).filter((q) => q.path.includes('file-read'))).toEqual([]);
  });

  it('shows what the agent reports: its version, the OS and the file systems', async () => {
    const r = await call(dev, 'pve_guest_info', VM);
    expect(r.isError, text(r)).toBeFalsy();
    const info = r.structuredContent as {
      agent_version: string;
      os: Record<string, string>;
      filesystems: { mountpoint: string; total_gib: number }[];
    };
    expect(info.agent_version).toMatch(/^\d+\.\d+/);
    expect(info.os['pretty-name']).toMatch(/^Debian GNU\/Linux 13/);
    expect(info.filesystems.map((f) => f.mountpoint)).toContain('/');
    expect(text(r)).toMatch(/^VM 100 \(web01\): guest agent \d/);
  });
});
