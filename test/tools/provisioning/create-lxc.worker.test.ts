// pve_create_lxc over /mcp against the simulator: a preview (exact parameters, the password
// redacted) that writes nothing; a confirmed creation from a template, unprivileged unless told
// otherwise; the root password in no result, log line or audit record.

import { describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auditRecords } from '../../support/worker/audit';
import { call, text } from '../../support/worker/mcp';
import { simSession } from '../../support/worker/session';
import { sim } from '../../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../../support/worker/policy';

usePolicy(OPEN_POLICY);

const TEMPLATE = 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst';
const KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example.com';
const PASSWORD = 'Root-pw-never-shown';
const CT = {
  node: 'pve1',
  ostemplate: TEMPLATE,
  hostname: 'dns02',
  memory: 1024,
  cores: 2,
  net0: 'name=eth0,bridge=vmbr0,ip=10.10.0.54/24,gw=10.10.0.1',
  rootfs: 'local-lvm:8',
  password: PASSWORD,
  ssh_public_keys: KEY,
  pool: 'lab',
};

describe('pve_create_lxc', () => {
  const session = simSession();
  const client = (): Client => session.client;

  it('previews the exact parameters, the password redacted, writing nothing', async () => {
    const r = await call(client(), 'pve_create_lxc', CT);
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      vmid: 106,
      vmid_source: 'next_free',
    });
    expect(r.structuredContent!.params).toEqual({
      vmid: '106',
      ostemplate: TEMPLATE,
      hostname: 'dns02',
      memory: '1024',
      cores: '2',
      net0: 'bridge=vmbr0,gw=10.10.0.1,ip=10.10.0.54/24,name=eth0',
      rootfs: 'local-lvm:8',
      password: '[redacted]',
      'ssh-public-keys': KEY,
      unprivileged: '1',
      pool: 'lab',
    });
    expect(text(r)).toMatch(
      /^Preview only: nothing was sent to Proxmox\.\nWould POST \/nodes\/pve1\/lxc \(106 is the next free id now/,
    );
    expect(JSON.stringify(r)).not.toContain(PASSWORD);
    expect(await sim.writes()).toEqual([]);
  });

  it('creates an unprivileged container from the template, the password out of results, logs and audit', async () => {
    const logs: string[] = [];
    const spy = vi
      .spyOn(console, 'log')
      .mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' ')));
    let r;
    try {
      r = await call(client(), 'pve_create_lxc', { ...CT, confirm: true, wait: true });
    } finally {
      spy.mockRestore();
    }
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'created',
      vmid: 106,
      task: { succeeded: true },
      upid: expect.stringMatching(/:vzcreate:106:/),
    });
    const [post] = await sim.writes();
    expect(post!.params).toMatchObject({
      password: PASSWORD,
      'ssh-public-keys': KEY,
      unprivileged: '1',
    });
    const ct = await sim.guest(106);
    expect(ct).toMatchObject({ type: 'lxc', node: 'pve1', pool: 'lab' });
    expect(ct.config).toMatchObject({
      hostname: 'dns02',
      memory: '1024',
      cores: '2',
      unprivileged: '1',
    });
    expect(ct.config.net0).toMatch(/bridge=vmbr0/);
    expect(ct.config.rootfs).toMatch(/^local-lvm:vm-106-disk-0/);
    const requestId = (
      JSON.parse(logs.find((l) => l.includes('"msg":"tool_call"'))!) as { request_id: string }
    ).request_id;
    const [record] = await auditRecords((a) => a.request_id === requestId);
    expect(record).toMatchObject({
      tool: 'pve_create_lxc',
      vmid: 106,
      args: { password: '[redacted]', hostname: 'dns02' },
    });
    for (const shown of [JSON.stringify(r), ...logs, JSON.stringify(record)])
      expect(shown).not.toContain(PASSWORD);
  });

  it('sends unprivileged: 0 only when asked for a privileged container', async () => {
    await call(client(), 'pve_create_lxc', {
      node: 'pve2',
      ostemplate: TEMPLATE,
      unprivileged: false,
      confirm: true,
    });
    const [post] = await sim.writes();
    expect(post!.params).toMatchObject({ ostemplate: TEMPLATE, unprivileged: '0' });
  });
});
