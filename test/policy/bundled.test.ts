// The policy.json shipped in the repository, as a deployment without POLICY gets it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, ORIGIN, text, workerFetch } from '../worker/helpers/mcp';
import { sim } from '../worker/helpers/sim';

const RULE = '/tools/pve_create_qemu_vm/deny_if';

describe('the bundled policy.json', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('is reported valid by /health', async () => {
    const body = (await (await workerFetch(`${ORIGIN}/health`)).json()) as Record<string, unknown>;
    expect(body.policy).toEqual({ origin: 'policy.json', valid: true });
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
    ['a hard stop', 'pve_stop_vm', { node: 'pve1', vmid: 101, confirm: true }, /hard power-off loses/],
    ['a rollback', 'pve_rollback_snapshot', { node: 'pve1', vmid: 101, snapname: 'anything', confirm: true }, /discards everything since the snapshot/],
    ['deleting a snapshot', 'pve_delete_snapshot', { node: 'pve1', vmid: 101, snapname: 'anything', confirm: true }, /cannot be undone/],
  ])('asks a person to approve %s, sending nothing meanwhile', async (_label, tool, args, reason) => {
    await sim.clearLog();
    const result = await call(client, tool, args);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^\[APPROVAL REQUIRED\] /);
    expect(text(result)).toMatch(reason);
    expect(result.structuredContent!.policy).toMatchObject({ decision: 'approval_required', rule: `/tools/${tool}/action` });
    expect(await sim.writes()).toEqual([]);
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
    ['importing another VM\'s disk', { scsi0: 'local-lvm:0,import-from=local-lvm:vm-100-disk-0' }, `${RULE}/5`],
  ])('denies %s, even as a preview, before writing anything', async (_label, args, rule) => {
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', { node: 'pve1', ...args });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^\[POLICY DENIED\] /);
    expect(result.structuredContent!.policy).toMatchObject({ decision: 'deny', rule });
    // The only request: the read of the next free vmid, which the policy sees as args.vmid.
    expect((await sim.requests()).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api2/json/cluster/nextid']);
  });

  it('allows a modest VM with an imported cloud image', async () => {
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1', memory: 4096, cores: 2, scsi0: 'local-lvm:0,import-from=local:import/debian-12-genericcloud-amd64.qcow2',
    });
    expect(result.isError, text(result)).toBeFalsy();
  });
});
