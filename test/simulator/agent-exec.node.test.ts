// The QEMU guest agent beyond network-get-interfaces, over HTTP: exec (the command as repeated form
// keys or a JSON array) and exec-status with output, exit codes, a process still running, the
// 16 MiB output cap and the pid forgotten once read; file-read with its count/offset/decode and
// truncation; ping, info, get-osinfo, get-fsinfo, get-host-name; PVE's refusals and permissions.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import {
  expectError,
  getData,
  runTask,
  type SimClient,
  useSimulator,
} from '../support/sim-harness.ts';

const client = useSimulator('agent-exec');
const audit = { token: SIMULATOR_TOKENS.audit };
const MIB = 1024 ** 2;

const agent = (node: string, vmid: number, command: string) =>
  `/nodes/${node}/qemu/${vmid}/agent/${command}`;

type Status = Record<string, unknown>;

async function exec(c: SimClient, command: readonly string[], extra: Record<string, string> = {}) {
  const res = await c.api('POST', agent('pve1', 100, 'exec'), { form: { command, ...extra } });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as { pid: number }).pid;
}

const status = (c: SimClient, pid: number, vmid = 100, node = 'pve1') =>
  getData<Status>(c, agent(node, vmid, 'exec-status'), { pid });

/** Run a command and read its final status. */
async function run(c: SimClient, command: readonly string[], extra: Record<string, string> = {}) {
  return status(c, await exec(c, command, extra));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('agent/exec and exec-status', () => {
  it('takes the command as repeated form keys and answers its output and exit code', async () => {
    const c = client();
    const pid = await exec(c, ['echo', 'hello', 'world']);
    expect(pid).toBeGreaterThan(1000);
    expect(await status(c, pid)).toEqual({ exited: 1, exitcode: 0, 'out-data': 'hello world\n' });
  });

  it('takes a JSON array too', async () => {
    const c = client();
    const res = await c.api('POST', agent('pve1', 100, 'exec'), {
      json: { command: ['uname', '-a'] },
    });
    const out = await status(c, (res.body.data as { pid: number }).pid);
    expect(out['out-data']).toBe(
      'Linux web01 6.12.48+deb13-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.12.48-1 (2025-09-20) x86_64 GNU/Linux\n',
    );
  });

  it('reports exit codes and stderr: false, systemctl for a known and an unknown unit', async () => {
    const c = client();
    expect(await run(c, ['false'])).toEqual({ exited: 1, exitcode: 1 });
    const sshd = await run(c, ['systemctl', 'status', 'sshd']);
    expect(sshd.exitcode).toBe(0);
    expect(String(sshd['out-data'])).toMatch(/ssh\.service - OpenBSD Secure Shell server\n/);
    expect(String(sshd['out-data'])).toMatch(/Active: active \(running\) since /);
    expect(await run(c, ['systemctl', 'status', 'nosuch'])).toEqual({
      exited: 1,
      exitcode: 4,
      'err-data': 'Unit nosuch.service could not be found.\n',
    });
    expect(await run(c, ['systemctl', 'is-active', 'nginx', 'apache2'])).toMatchObject({
      exitcode: 3,
      'out-data': 'active\ninactive\n',
    });
  });

  it('feeds input-data as stdin and runs sh -c scripts', async () => {
    const c = client();
    expect((await run(c, ['cat'], { 'input-data': 'from stdin\n' }))['out-data']).toBe(
      'from stdin\n',
    );
    const script = await run(c, ['sh', '-c', 'hostname; nosuch --flag || echo fallback']);
    expect(script).toEqual({
      exited: 1,
      exitcode: 0,
      'out-data': 'web01\nfallback\n',
      'err-data': 'sh: 1: nosuch: not found\n',
    });
    expect((await run(c, ['bash', '-c', 'exit 7'])).exitcode).toBe(7);
  });

  it('reports a running process as not exited until its time is up', async () => {
    const c = client();
    const pid = await exec(c, ['sleep', '0.4']);
    expect(await status(c, pid)).toEqual({ exited: 0 });
    expect(await status(c, pid)).toEqual({ exited: 0 });
    await sleep(450);
    expect(await status(c, pid)).toEqual({ exited: 1, exitcode: 0 });
  });

  it('forgets a pid once its final status was read, as qemu-ga does', async () => {
    const c = client();
    const pid = await exec(c, ['true']);
    await status(c, pid);
    expectError(
      await c.api('GET', agent('pve1', 100, 'exec-status'), { query: { pid } }),
      500,
      'Agent error: PID ld does not exist',
    );
  });

  it('caps each output stream at 16 MiB and says so', async () => {
    const c = client();
    const out = await run(c, ['seq', '3000000']);
    expect(out.exitcode).toBe(0);
    expect(String(out['out-data']).length).toBe(16 * MIB);
    expect(out['out-truncated']).toBe(1);
    expect(String(out['out-data']).startsWith('1\n2\n3\n')).toBe(true);
    expect((await run(c, ['seq', '3']))['out-truncated']).toBeUndefined();
  });

  it('fails the exec itself for a program the guest does not have, as glib spawn does', async () => {
    const c = client();
    expectError(
      await c.api('POST', agent('pve1', 100, 'exec'), { form: { command: ['nosuch', '-x'] } }),
      500,
      'Agent error: Failed to execute child process “nosuch” (No such file or directory)',
    );
    // one form key with spaces is one program name in PVE 9 (an array of one)
    expectError(
      await c.api('POST', agent('pve1', 100, 'exec'), { form: { command: 'ls -la /' } }),
      500,
      'Agent error: Failed to execute child process “ls -la /” (No such file or directory)',
    );
    expectError(
      await c.api('POST', agent('pve1', 100, 'exec'), { form: { command: ['/etc/passwd'] } }),
      500,
      'Agent error: Failed to execute child process “/etc/passwd” (Permission denied)',
    );
  });

  it('validates like PVE: command is a required array, input-data at most 64 KiB', async () => {
    const c = client();
    expectError(await c.api('POST', agent('pve1', 100, 'exec'), { form: {} }), 400, {
      command: 'property is missing and it is not optional',
    });
    expectError(await c.api('POST', agent('pve1', 100, 'exec'), { form: { command: '0' } }), 400, {
      command: "type check ('array') failed",
    });
    expectError(
      await c.api('POST', agent('pve1', 100, 'exec'), { json: { command: [] } }),
      500,
      'command or input-data (or both) required',
    );
    expectError(
      await c.api('POST', agent('pve1', 100, 'exec'), {
        form: { command: ['cat'], 'input-data': 'x'.repeat(65_537) },
      }),
      400,
      { 'input-data': 'value may only be 65536 characters long' },
    );
    expectError(
      await c.api('POST', agent('pve1', 100, 'exec'), {
        form: { command: ['cat'], 'input-data': '✓' },
      }),
      500,
      'Wide character in subroutine entry at /usr/share/perl5/PVE/QemuServer/Agent.pm line 138.',
    );
  });

  it('starts with an empty process table after the VM restarts', async () => {
    const c = client();
    const pid = await exec(c, ['sleep', '60']);
    await runTask(c, 'POST', '/nodes/pve1/qemu/100/status/stop');
    await runTask(c, 'POST', '/nodes/pve1/qemu/100/status/start');
    expect(await status(c, await exec(c, ['true']))).toEqual({ exited: 1, exitcode: 0 });
    expectError(
      await c.api('GET', agent('pve1', 100, 'exec-status'), { query: { pid } }),
      500,
      'Agent error: PID ld does not exist',
    );
  });
});

describe('agent/file-read', () => {
  const read = (c: SimClient, query: Record<string, string | number>, vmid = 100) =>
    c.api('GET', agent(vmid === 120 ? 'pve2' : 'pve1', vmid, 'file-read'), { query });

  it("reads a guest file whole: content and bytes-read, no 'truncated'", async () => {
    const c = client();
    const res = await read(c, { file: '/etc/hostname' });
    expect(res.body.data).toEqual({ content: 'web01\n', 'bytes-read': 6 });
    const osRelease = (await read(c, { file: '/etc/os-release' })).body.data as Status;
    expect(osRelease.content).toMatch(/^PRETTY_NAME="Debian GNU\/Linux 13 \(trixie\)"\n/);
    // the simulator's fake secrets exist, so that only the MCP server's policy keeps them out
    expect((await read(c, { file: '/etc/shadow' })).body.data).toMatchObject({
      content: expect.stringMatching(/^root:\$y\$/),
    });
    expect((await read(c, { file: '/root/.ssh/id_ed25519' })).status).toBe(200);
  });

  it('answers the agent errors for a missing file and a directory', async () => {
    const c = client();
    expectError(
      await read(c, { file: '/nonexistent' }),
      500,
      "Agent error: failed to open file '/nonexistent' (mode: 'r'): No such file or directory",
    );
    expectError(
      await read(c, { file: '/etc' }),
      500,
      'Agent error: failed to read file: Is a directory',
    );
  });

  it('stops at 16 MiB (or count) and marks the content truncated', async () => {
    const c = client();
    const big = (await read(c, { file: '/var/log/syslog.1' })).body.data as Status;
    expect(big['bytes-read']).toBe(16 * MIB);
    expect(String(big.content).length).toBe(16 * MIB);
    expect(big.truncated).toBe(1);
    const head = (await read(c, { file: '/etc/hostname', count: 3 })).body.data;
    expect(head).toEqual({ content: 'web', 'bytes-read': 3, truncated: 1 });
    // exactly the file's size: fread never hit EOF, so PVE still says truncated
    expect((await read(c, { file: '/etc/hostname', count: 6 })).body.data).toEqual({
      content: 'web01\n',
      'bytes-read': 6,
      truncated: 1,
    });
    expect((await read(c, { file: '/etc/hostname', offset: 3 })).body.data).toEqual({
      content: '01\n',
      'bytes-read': 3,
    });
  });

  it('passes base64 through with decode=0, and writes decoded bytes as PVE JSON does', async () => {
    const c = client();
    const raw = (await read(c, { file: '/etc/hostname', decode: 0 })).body.data as Status;
    expect(raw.content).toBe(Buffer.from('web01\n').toString('base64'));
    // PVE prints each byte as one character: UTF-8 text arrives encoded twice
    const notes = (await read(c, { file: '/home/debian/notes.txt' })).body.data as Status;
    const text = Buffer.from(String(notes.content), 'latin1').toString('utf8');
    expect(text).toMatch(/Grüße/);
    expect(String(notes.content)).not.toMatch(/Grüße/);
  });

  it('validates count against MAX_READ_SIZE', async () => {
    expectError(await read(client(), { file: '/etc/hostname', count: 0 }), 400, {
      count: 'value must have a minimum value of 1',
    });
  });
});

describe('agent info commands', () => {
  it('reports the OS per guest: Debian 13 on web01, Ubuntu 24.04 on db01', async () => {
    const c = client();
    const debian = await getData<{ result: Status }>(c, agent('pve1', 100, 'get-osinfo'));
    expect(debian.result).toMatchObject({
      id: 'debian',
      'pretty-name': 'Debian GNU/Linux 13 (trixie)',
      'version-id': '13',
      'kernel-release': '6.12.48+deb13-amd64',
      machine: 'x86_64',
    });
    const ubuntu = await getData<{ result: Status }>(c, agent('pve1', 102, 'get-osinfo'));
    expect(ubuntu.result).toMatchObject({ id: 'ubuntu', 'version-id': '24.04' });
  });

  it('answers ping (POST only), info, get-host-name and get-fsinfo', async () => {
    const c = client();
    expect((await c.api('POST', agent('pve1', 100, 'ping'))).body.data).toEqual({ result: {} });
    expect((await c.api('GET', agent('pve1', 100, 'ping'))).status).toBe(501);
    const info = await getData<{ result: Status }>(c, agent('pve1', 100, 'info'));
    expect(info.result.version).toBe('10.0.2');
    expect(info.result.supported_commands).toEqual(
      expect.arrayContaining([{ name: 'guest-exec', enabled: true, 'success-response': true }]),
    );
    expect(await getData(c, agent('pve2', 120, 'get-host-name'))).toEqual({
      result: { 'host-name': 'files01' },
    });
    const fs = await getData<{ result: Status[] }>(c, agent('pve2', 120, 'get-fsinfo'));
    expect(fs.result[0]).toMatchObject({
      mountpoint: '/',
      type: 'ext4',
      'total-bytes': 64 * 1024 ** 3 - 128 * MIB,
      disk: [expect.objectContaining({ 'bus-type': 'scsi', dev: '/dev/sda1' })],
    });
  });

  it('refuses like PVE: no agent configured, VM not running, agent not answering', async () => {
    const c = client();
    for (const [method, command, query] of [
      ['GET', 'get-osinfo', {}],
      ['POST', 'exec', { command: 'true' }],
      ['GET', 'exec-status', { pid: 1 }],
      ['GET', 'file-read', { file: '/etc/hostname' }],
    ] as [string, string, Record<string, string | number>][]) {
      const opts = method === 'POST' ? { form: query } : { query };
      expectError(
        await c.api(method, agent('pve2', 103, command), opts),
        500,
        'No QEMU guest agent configured',
      );
      expectError(
        await c.api(method, agent('pve2', 104, command), opts),
        500,
        'VM 104 is not running',
      );
      expectError(
        await c.api(method, agent('pve3', 105, command), opts),
        500,
        'QEMU guest agent is not running',
      );
    }
    expectError(
      await c.api('GET', agent('pve2', 100, 'get-osinfo')),
      500,
      "Configuration file 'nodes/pve2/qemu-server/100.conf' does not exist",
    );
  });

  it('reports Windows for a win11 guest once it runs', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve2/qemu/104/status/start');
    await c.setAgent(104, true);
    const os = await getData<{ result: Status }>(c, agent('pve2', 104, 'get-osinfo'));
    expect(os.result).toMatchObject({ id: 'mswindows', 'pretty-name': 'Windows 11 Pro' });
  });
});

describe('agent permissions', () => {
  it('needs VM.GuestAgent.* privileges the audit token lacks', async () => {
    const c = client();
    expectError(
      await c.api('POST', agent('pve1', 100, 'exec'), { form: { command: 'true' }, ...audit }),
      403,
      'Permission check failed (/vms/100, VM.GuestAgent.Unrestricted)',
    );
    expectError(
      await c.api('GET', agent('pve1', 100, 'exec-status'), { query: { pid: 1 }, ...audit }),
      403,
      'Permission check failed (/vms/100, VM.GuestAgent.Unrestricted)',
    );
    expectError(
      await c.api('GET', agent('pve1', 100, 'file-read'), { query: { file: '/x' }, ...audit }),
      403,
      'Permission check failed (/vms/100, VM.GuestAgent.FileRead|VM.GuestAgent.Unrestricted)',
    );
    expectError(
      await c.api('GET', agent('pve1', 100, 'get-osinfo'), audit),
      403,
      'Permission check failed (/vms/100, VM.GuestAgent.Audit|VM.GuestAgent.Unrestricted)',
    );
  });
});
