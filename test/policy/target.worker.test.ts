// Rules over what a call touches (`target.*`), end to end over MCP against the simulator's seeded
// cluster: 100 (pve1, pool prod, tags prod;web, running), 103 (pve2, no pool, tags ci, running),
// 104 (pve2, pool lab, stopped), 102 (protection on), template 9000 (tags template). The facts are
// read from Proxmox before the policy decides (pve_get_vm_status: from the status it shows, where
// that answers them); what Proxmox was asked, and whether anything was written, is read from the
// simulator's request log.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text } from '../support/worker/mcp';
import { auditRecords } from '../support/worker/audit';
import { sim } from '../support/worker/sim';
import { TARGET_FACTS_BUDGET_MS } from '../../src/proxmox/target-facts';
import { setPolicy, usePolicy } from '../support/worker/policy';

const notProd = { path: 'target.tags', op: 'contains', value: 'prod' } as const;

usePolicy({
  version: '1',
  default: 'allow',
  tools: {
    pve_stop_vm: { deny_if: [notProd] },
    pve_create_snapshot: { deny_if: [notProd] },
    pve_set_vm_config: { deny_if: [notProd] },
    pve_delete_vm: {
      deny_if: [
        {
          path: 'target.template',
          op: 'eq',
          value: true,
          reason: 'Templates are never destroyed.',
        },
        { path: 'target.protection', op: 'eq', value: true },
      ],
    },
    // The source must not be prod; the clone it makes must go into pool lab.
    pve_clone_vm: { deny_if: [notProd], require: [{ path: 'new.pool', op: 'eq', value: 'lab' }] },
    pve_create_backup: { deny_if: [notProd] },
    pve_guest_exec: { deny_if: [notProd] },
    pve_api_request: { deny_if: [notProd] },
    pve_restore_backup: { deny_if: [notProd] },
    pve_delete_backup: { deny_if: [notProd] },
    pve_start_vm: { require: [{ path: 'target.pool', op: 'eq', value: 'lab' }] },
    pve_create_qemu_vm: { require: [{ path: 'target.pool', op: 'eq', value: 'lab' }] },
  },
});

const RESOURCES = 'GET /api2/json/cluster/resources';
/** A guest's own status, as pve_get_vm_status asks for it. */
const statusOf = (node: string, vmid: number, kind = 'qemu') =>
  `GET /api2/json/nodes/${node}/${kind}/${vmid}/status/current`;

describe('a policy over what a call touches', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect('http');
  });
  afterAll(() => client.close());
  beforeEach(async () => {
    await sim.clearFaults();
    await sim.reset();
    await sim.clearLog();
  });

  /** Refused by `rule`, after one read of the cluster's resources and nothing else. */
  async function refusedAfterOneRead(
    tool: string,
    args: Record<string, unknown>,
    rule: string,
  ): Promise<string> {
    const result = await call(client, tool, { ...args, confirm: true });
    expect(result.isError).toBe(true);
    expect(result.structuredContent!.policy).toMatchObject({ decision: 'deny', rule });
    expect(await sim.requestLines()).toEqual([RESOURCES]);
    return text(result);
  }

  /** Refused by `rule` after exactly the reads `lines` ("METHOD /api2/json/path"), nothing written. */
  async function refusedAfterReads(
    tool: string,
    args: Record<string, unknown>,
    rule: string,
    lines: string[],
  ): Promise<void> {
    const result = await call(client, tool, { ...args, confirm: true });
    expect(result.structuredContent!.policy).toMatchObject({ decision: 'deny', rule });
    expect(await sim.requestLines()).toEqual(lines);
  }

  /** Refused by `rule`, with nothing written (whatever it read first). */
  async function refusedWritingNothing(
    tool: string,
    args: Record<string, unknown>,
    rule: string,
  ): Promise<void> {
    const result = await call(client, tool, { ...args, confirm: true });
    expect(result.structuredContent!.policy).toMatchObject({ decision: 'deny', rule });
    expect(await sim.writes()).toEqual([]);
  }

  /** The volids of guest `vmid`'s backups on `node`'s local storage, as pve_list_backups lists them. */
  async function backupsOf(node: string, vmid: number): Promise<string[]> {
    const listed = await call(client, 'pve_list_backups', { node, storage: 'local', vmid });
    return (listed.structuredContent!.backups as { volid: string }[]).map((b) => b.volid);
  }

  /** A task of the simulator's, started past the server, to its end: its exit status. */
  async function taskEnd(node: string, upid: string): Promise<string | undefined> {
    for (let i = 0; i < 100; i++) {
      const res = await sim.api('GET', `/nodes/${node}/tasks/${encodeURIComponent(upid)}/status`);
      const { data } = (await res.json()) as { data: { status: string; exitstatus?: string } };
      if (data.status === 'stopped') return data.exitstatus;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`task ${upid} did not end`);
  }

  /** Let through: the call went on to write (`write`, "METHOD path" below /api2/json). */
  async function wrote(tool: string, args: Record<string, unknown>, write: string): Promise<void> {
    const result = await call(client, tool, { ...args, confirm: true });
    expect(result.structuredContent?.policy).toBeUndefined();
    expect(await sim.writeLines()).toContain(
      `${write.split(' ')[0]} /api2/json${write.split(' ')[1]}`,
    );
  }

  /** Refused on a prod guest after one read; the same call on another guest sent (`write`). */
  async function refusedOnProdSentOtherwise(
    tool: string,
    prod: Record<string, unknown>,
    other: Record<string, unknown>,
    write: string,
  ): Promise<void> {
    await refusedAfterOneRead(tool, prod, `/tools/${tool}/deny_if/0`);
    await sim.clearLog();
    await wrote(tool, other, write);
    await sim.clearLog();
  }

  it('power: a guest tagged prod is not stopped, an untagged one is', async () => {
    const since = Date.now();
    const said = await refusedAfterOneRead(
      'pve_stop_vm',
      { node: 'pve1', vmid: 100 },
      '/tools/pve_stop_vm/deny_if/0',
    );
    expect(said).toBe('[POLICY DENIED] Denied by policy: target.tags contains "prod".');
    // The audit trail keeps the facts the decision used, beside the arguments.
    const [record] = await auditRecords(
      (r) =>
        r.ts >= since && r.tool === 'pve_stop_vm' && r.args.vmid === 100 && r.decision === 'deny',
    );
    expect(record!.args['(target)']).toEqual({ tags: ['prod', 'web'] });
    await sim.clearLog();
    await wrote(
      'pve_stop_vm',
      { node: 'pve2', vmid: 103 },
      'POST /nodes/pve2/qemu/103/status/stop',
    );
  });

  it('snapshots and config: refused on prod, sent for an untagged guest', async () => {
    await refusedOnProdSentOtherwise(
      'pve_create_snapshot',
      { node: 'pve1', vmid: 100, snapname: 'before' },
      { node: 'pve2', vmid: 103, snapname: 'before' },
      'POST /nodes/pve2/qemu/103/snapshot',
    );
    await refusedOnProdSentOtherwise(
      'pve_set_vm_config',
      { node: 'pve1', vmid: 100, config: { description: 'x' } },
      { node: 'pve2', vmid: 103, config: { description: 'x' } },
      'POST /nodes/pve2/qemu/103/config',
    );
  });

  it('delete: a template is never destroyed, a protected guest neither (its config read too)', async () => {
    const result = await call(client, 'pve_delete_vm', { node: 'pve1', vmid: 9000, confirm: true });
    expect(result.structuredContent!.policy).toMatchObject({
      rule: '/tools/pve_delete_vm/deny_if/0',
      reason: 'Templates are never destroyed.',
    });
    expect(await sim.requestLines()).toEqual([
      RESOURCES,
      'GET /api2/json/nodes/pve1/qemu/9000/config',
    ]);
    await sim.clearLog();
    const guarded = await call(client, 'pve_delete_vm', { node: 'pve1', vmid: 102, confirm: true });
    expect(guarded.structuredContent!.policy).toMatchObject({
      rule: '/tools/pve_delete_vm/deny_if/1',
    });
    expect(await sim.writes()).toEqual([]);
    await sim.clearLog();
    await wrote('pve_delete_vm', { node: 'pve2', vmid: 104 }, 'DELETE /nodes/pve2/qemu/104');
  });

  it('clone, backup, guest agent and raw API: the guest acted on is judged', async () => {
    // A clone reads its source first (what the new guest inherits), then the facts.
    const clone = await call(client, 'pve_clone_vm', {
      node: 'pve1',
      source_vmid: 100,
      newid: 500,
      confirm: true,
    });
    expect(clone.structuredContent!.policy).toMatchObject({
      rule: '/tools/pve_clone_vm/deny_if/0',
    });
    expect(await sim.requestLines()).toEqual([
      'GET /api2/json/nodes/pve1/qemu/100/status/current',
      'GET /api2/json/nodes/pve1/qemu/100/config',
      RESOURCES,
    ]);
    await sim.clearLog();
    await refusedWritingNothing(
      'pve_clone_vm',
      { node: 'pve1', source_vmid: 9000, newid: 500 },
      '/tools/pve_clone_vm/require/0',
    );
    await wrote(
      'pve_clone_vm',
      { node: 'pve1', source_vmid: 9000, newid: 500, pool: 'lab' },
      'POST /nodes/pve1/qemu/9000/clone',
    );
    await sim.clearLog();
    await refusedOnProdSentOtherwise(
      'pve_create_backup',
      { node: 'pve1', vmid: 100, storage: 'local' },
      { node: 'pve2', vmid: 103, storage: 'local' },
      'POST /nodes/pve2/vzdump',
    );
    await refusedAfterOneRead(
      'pve_guest_exec',
      { node: 'pve1', vmid: 100, command: ['uptime'] },
      '/tools/pve_guest_exec/deny_if/0',
    );
    await sim.clearLog();
    // The same call once 100 no longer carries the tag (103, untagged, has no guest agent).
    expect((await sim.api('PUT', '/nodes/pve1/qemu/100/config', { tags: 'web' })).status).toBe(200);
    await wrote(
      'pve_guest_exec',
      { node: 'pve1', vmid: 100, command: ['uptime'] },
      'POST /nodes/pve1/qemu/100/agent/exec',
    );
    await sim.clearLog();
    await refusedOnProdSentOtherwise(
      'pve_api_request',
      { method: 'POST', path: '/nodes/pve1/qemu/101/status/stop' },
      { method: 'POST', path: '/nodes/pve2/qemu/103/status/stop' },
      'POST /nodes/pve2/qemu/103/status/stop',
    );
    // A guest's HA resource and its replication job name it too: VM 120, tagged prod now.
    const tagged = await sim.api('PUT', '/nodes/pve2/qemu/120/config', { tags: 'prod' });
    expect(tagged.status).toBe(200);
    for (const [method, path] of [
      ['PUT', '/cluster/ha/resources/120'],
      ['POST', '/cluster/ha/resources/120/migrate'],
      ['DELETE', '/cluster/replication/120-0'],
    ] as const) {
      await sim.clearLog();
      await refusedAfterOneRead(
        'pve_api_request',
        { method, path, params: method === 'PUT' ? { state: 'stopped' } : {} },
        '/tools/pve_api_request/deny_if/0',
      );
    }
  });

  it("backups: a restore over a prod guest, the deletion of its backup and a restore of it as a new guest are refused; another's restore goes through", async () => {
    const [volume] = await backupsOf('pve1', 100);
    await sim.clearLog();
    // The guest it replaces is judged with the tags the restore writes into it added.
    const extract = 'GET /api2/json/nodes/pve1/vzdump/extractconfig';
    await refusedAfterReads(
      'pve_restore_backup',
      { node: 'pve1', volume, vmid: 100, force: true },
      '/tools/pve_restore_backup/deny_if/0',
      [RESOURCES, extract],
    );
    await sim.clearLog();
    // So a prod backup restored over a guest that is not prod (template 9000, tagged template)
    // would make it a prod copy: refused.
    await refusedAfterReads(
      'pve_restore_backup',
      { node: 'pve1', volume, vmid: 9000, force: true },
      '/tools/pve_restore_backup/deny_if/0',
      [RESOURCES, extract],
    );
    await sim.clearLog();
    // The guest's tags and its backup's: both read.
    await refusedAfterReads(
      'pve_delete_backup',
      { node: 'pve1', volume },
      '/tools/pve_delete_backup/deny_if/0',
      [RESOURCES, extract],
    );
    await sim.clearLog();
    // No guest has 600: the restore is judged as the guest it makes, with the tags its backup's
    // config holds: VM 100's backup makes a guest tagged prod.
    await refusedAfterReads(
      'pve_restore_backup',
      { node: 'pve1', volume, vmid: 600 },
      '/tools/pve_restore_backup/deny_if/0',
      [RESOURCES, 'GET /api2/json/cluster/nextid', extract],
    );
    await sim.clearLog();
    // Container 110's backup (tagged infra) makes a guest that is not.
    const [ct] = await backupsOf('pve1', 110);
    await sim.clearLog();
    await wrote(
      'pve_restore_backup',
      { node: 'pve1', volume: ct, vmid: 600 },
      'POST /nodes/pve1/lxc',
    );
  });

  it("a clone's new guest is judged as Proxmox makes it: its source's tags, and the name Proxmox gives it", async () => {
    const judged = await setPolicy({
      version: '1',
      default: 'allow',
      tools: {
        pve_clone_vm: {
          deny_if: [{ path: 'new.tags', op: 'contains', value: 'template' }],
          require: [{ path: 'new.name', op: 'regex', value: '^Copy-of-VM-ci-runner01$' }],
        },
      },
    });
    try {
      // Template 9000 is tagged template: so would its clone be.
      await refusedWritingNothing(
        'pve_clone_vm',
        { node: 'pve1', source_vmid: 9000, newid: 500 },
        '/tools/pve_clone_vm/deny_if/0',
      );
      // VM 103 (ci-runner01, tagged ci), cloned without a name.
      const made = await call(client, 'pve_clone_vm', {
        node: 'pve2',
        source_vmid: 103,
        newid: 501,
        full: true,
        confirm: true,
        wait: true,
      });
      expect(made.isError, text(made)).toBeFalsy();
      expect(made.structuredContent?.policy).toBeUndefined();
      // What the rules judged is what Proxmox made.
      const config = (await sim.guest(501)).config;
      expect({ name: config.name, tags: config.tags }).toEqual({
        name: 'Copy-of-VM-ci-runner01',
        tags: 'ci',
      });
      // The record keeps them beside what else the clone took from its source.
      const [record] = await auditRecords(
        (r) => r.tool === 'pve_clone_vm' && r.args.newid === 501 && r.decision === 'allow',
      );
      expect(record!.args['(inherited)']).toMatchObject({
        tags: ['ci'],
        name: 'Copy-of-VM-ci-runner01',
      });
    } finally {
      await judged.restore();
    }
  });

  it('a guest whose node does not report it: its template flag is unknown, a delete refused, naming why', async () => {
    await sim.setNode('pve1', 'offline');
    try {
      const result = await call(client, 'pve_delete_vm', {
        node: 'pve1',
        vmid: 9000,
        confirm: true,
      });
      expect(result.structuredContent!.policy).toMatchObject({
        rule: '/tools/pve_delete_vm/deny_if/0',
      });
      expect(text(result)).toContain(
        'target.template of the guest could not be read from Proxmox (its node pve1 did not report it (status unknown))',
      );
      expect(await sim.writes()).toEqual([]);
    } finally {
      await sim.setNode('pve1', 'online');
    }
  });

  it('a pool the token may not see is unknown, not "no pool": the require refuses, naming Pool.Audit', async () => {
    await sim.fault({
      method: 'GET',
      path: '^/access/permissions$',
      status: 200,
      body: { data: { '/pool': {} } },
    });
    const result = await call(client, 'pve_start_vm', { node: 'pve2', vmid: 103, confirm: true });
    expect(text(result)).toContain(
      "target.pool of the guest could not be read from Proxmox (this server's API token may not see pools (Pool.Audit on /pool))",
    );
    expect(await sim.writes()).toEqual([]);
  });

  it('require target.pool: a guest outside the pool is refused, one in it goes through', async () => {
    const result = await call(client, 'pve_start_vm', { node: 'pve2', vmid: 103, confirm: true });
    expect(result.structuredContent!.policy).toMatchObject({
      rule: '/tools/pve_start_vm/require/0',
    });
    // Listed without a pool: in none, since the token may see pools (else the pool is unknown).
    expect(await sim.requestLines()).toEqual([RESOURCES, 'GET /api2/json/access/permissions']);
    expect(text(result)).toBe(
      '[POLICY DENIED] Denied by policy: target.pool is required (it must satisfy eq "lab") and the guest has none.',
    );
    await sim.clearLog();
    await wrote(
      'pve_start_vm',
      { node: 'pve2', vmid: 104 },
      'POST /nodes/pve2/qemu/104/status/start',
    );
  });

  it('a create is judged as the guest it would make: without pool lab refused, nothing read or written', async () => {
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: 700,
      confirm: true,
    });
    expect(result.structuredContent!.policy).toMatchObject({
      rule: '/tools/pve_create_qemu_vm/require/0',
    });
    expect(await sim.requests()).toEqual([]);
    await wrote(
      'pve_create_qemu_vm',
      { node: 'pve1', vmid: 700, pool: 'lab' },
      'POST /nodes/pve1/qemu',
    );
  });

  it('a tag added between the preview and the confirmed call refuses the call', async () => {
    const preview = await call(client, 'pve_stop_vm', { node: 'pve2', vmid: 103 });
    expect(preview.structuredContent!.mode).toBe('preview');
    const tagged = await sim.api('PUT', '/nodes/pve2/qemu/103/config', { tags: 'ci;prod' });
    expect(tagged.status).toBe(200);
    await sim.clearLog();
    await refusedAfterOneRead(
      'pve_stop_vm',
      { node: 'pve2', vmid: 103 },
      '/tools/pve_stop_vm/deny_if/0',
    );
  });

  it('facts Proxmox does not give in time refuse the call, naming the fact; nothing is written', async () => {
    // Past the facts' deadline (the server's own), well within the test's.
    const delayMs = TARGET_FACTS_BUDGET_MS + 2_000;
    await sim.fault({ method: 'GET', path: '^/cluster/resources$', delayMs });
    const result = await call(client, 'pve_stop_vm', { node: 'pve2', vmid: 103, confirm: true });
    expect(result.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_stop_vm/deny_if/0',
    });
    expect(text(result)).toMatch(
      /^\[POLICY DENIED\] Denied by policy: target\.tags of the guest could not be read from Proxmox \(the cluster's resources: .+\), so this rule cannot let the call through\.$/,
    );
    expect(await sim.writes()).toEqual([]);
  });

  it("a destroyed guest: its backups are judged as its backup's config keeps it, its last task as of no guest, a call on it refused", async () => {
    // VM 104 (pool lab, stopped, untagged) is backed up, tagged prod and backed up again, then
    // destroyed.
    const untagged = await call(client, 'pve_create_backup', {
      node: 'pve2',
      vmid: 104,
      storage: 'local',
      confirm: true,
      wait: true,
    });
    expect(untagged.isError, text(untagged)).toBeFalsy();
    const backups = () => backupsOf('pve2', 104);
    const [first] = await backups();
    expect((await sim.api('PUT', '/nodes/pve2/qemu/104/config', { tags: 'prod' })).status).toBe(
      200,
    );
    // vzdump names a backup by the second it starts: the next one in another second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const dump = await sim.api('POST', '/nodes/pve2/vzdump', { vmid: '104', storage: 'local' });
    expect(await taskEnd('pve2', ((await dump.json()) as { data: string }).data)).toBe('OK');
    const second = (await backups()).find((volid) => volid !== first)!;
    expect([first, second].every(Boolean)).toBe(true);
    const extract = 'GET /api2/json/nodes/pve2/vzdump/extractconfig';
    // Its tags taken off again: the backup taken while it was prod is a prod backup still.
    expect((await sim.api('PUT', '/nodes/pve2/qemu/104/config', { delete: 'tags' })).status).toBe(
      200,
    );
    await sim.clearLog();
    await refusedAfterReads(
      'pve_delete_backup',
      { node: 'pve2', volume: second },
      '/tools/pve_delete_backup/deny_if/0',
      [RESOURCES, extract],
    );
    const gone = await call(client, 'pve_delete_vm', {
      node: 'pve2',
      vmid: 104,
      confirm: true,
      wait: true,
    });
    expect(gone.isError, text(gone)).toBeFalsy();
    expect((await backups()).sort()).toEqual([first, second].sort());
    await sim.clearLog();
    // Not among the cluster's resources, and its id is free: the backup taken while it was
    // prod is refused (nothing written), the one taken before is deleted.
    await refusedAfterReads(
      'pve_delete_backup',
      { node: 'pve2', volume: second },
      '/tools/pve_delete_backup/deny_if/0',
      [RESOURCES, 'GET /api2/json/cluster/nextid', extract],
    );
    await wrote(
      'pve_delete_backup',
      { node: 'pve2', volume: first },
      `DELETE /nodes/pve2/storage/local/content/${first}`,
    );
    await sim.clearLog();
    // A call that needs the guest is refused, saying it does not exist.
    const started = await call(client, 'pve_start_vm', { node: 'pve2', vmid: 104, confirm: true });
    expect(started.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_start_vm/require/0',
    });
    expect(text(started)).toBe(
      '[POLICY DENIED] Denied by policy: target.pool of the guest could not be read from Proxmox (guest 104 does not exist), so this rule cannot let the call through.',
    );
    expect(await sim.requestLines()).toEqual([RESOURCES, 'GET /api2/json/cluster/nextid']);
    // The status of the task that destroyed it is of no guest: a rule needing its pool says so.
    const judged = await setPolicy({
      version: '1',
      default: 'allow',
      tools: {
        pve_get_task_status: { require: [{ path: 'target.pool', op: 'eq', value: 'lab' }] },
      },
    });
    try {
      const status = await call(client, 'pve_get_task_status', {
        node: 'pve2',
        upid: gone.structuredContent!.upid as string,
      });
      expect(text(status)).toBe(
        '[POLICY DENIED] Denied by policy: target.pool is required (it must satisfy eq "lab") and the guest does not exist.',
      );
    } finally {
      await judged.restore();
    }
  });

  it("a guest's own status answers a read tool's rules and its answer: one request", async () => {
    const fields = (r: Awaited<ReturnType<typeof call>>) => {
      const { vmid, name, status, qmpstatus, template } = r.structuredContent!;
      return { vmid, name, status, qmpstatus, template };
    };
    const before = fields(await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100 }));
    expect(before).toMatchObject({ vmid: 100, status: 'running' });
    const judged = await setPolicy({
      version: '1',
      default: 'allow',
      tools: {
        pve_get_vm_status: {
          deny_if: [{ ...notProd, value: 'nothing-has-this-tag' }],
          require: [{ path: 'target.status', op: 'in', value: ['running', 'stopped'] }],
        },
      },
    });
    try {
      await sim.clearLog();
      const shown = await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100 });
      expect(fields(shown)).toEqual(before);
      expect(await sim.requestLines()).toEqual([statusOf('pve1', 100)]);
    } finally {
      await judged.restore();
    }
    // Refused on what that one read said, and nothing else asked.
    const denied = await setPolicy({
      version: '1',
      default: 'allow',
      tools: { pve_get_vm_status: { deny_if: [notProd] } },
    });
    try {
      await sim.clearLog();
      const refused = await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100 });
      expect(refused.structuredContent!.policy).toMatchObject({
        rule: '/tools/pve_get_vm_status/deny_if/0',
      });
      expect(await sim.requestLines()).toEqual([statusOf('pve1', 100)]);
    } finally {
      await denied.restore();
    }
  });

  it("a container's facts from the status it shows; a rule on node or pool reads the list; a status Proxmox refuses is unread", async () => {
    const judged = (rule: object) =>
      setPolicy({
        version: '1',
        default: 'allow',
        tools: { pve_get_vm_status: { deny_if: [rule] } },
      });
    const shown = async (args: Record<string, unknown>, reads: string[]) => {
      await sim.clearLog();
      const result = await call(client, 'pve_get_vm_status', args);
      expect(await sim.requestLines()).toEqual(reads);
      return result;
    };
    const container = { node: 'pve2', vmid: 201, vm_type: 'lxc' };
    const tags = await judged(notProd);
    try {
      const ok = await shown(container, [statusOf('pve2', 201, 'lxc')]);
      expect(ok.structuredContent).toMatchObject({ vmid: 201, status: 'running' });
      const refused = await shown({ ...container, vmid: 200 }, [statusOf('pve2', 200, 'lxc')]);
      expect(refused.structuredContent!.policy).toMatchObject({
        rule: '/tools/pve_get_vm_status/deny_if/0',
      });
      // Container 200 asked for as a VM: Proxmox has no such VM, so its tags are not known.
      const wrongKind = await shown({ node: 'pve2', vmid: 200 }, [statusOf('pve2', 200)]);
      expect(text(wrongKind)).toMatch(
        /target\.tags of the guest could not be read from Proxmox \(guest 200's status on node pve2: .+\)/,
      );
    } finally {
      await tags.restore();
    }
    // Its node is the list's (Proxmox answers a node's own guests as `localhost` too), its pool
    // only the list's: the list first, then the status the call shows (200 is in pool prod).
    for (const rule of [
      { path: 'target.node', op: 'eq', value: 'pve9' },
      { path: 'target.pool', op: 'eq', value: 'no-such-pool' },
    ]) {
      const listed = await judged(rule);
      try {
        const ok = await shown({ ...container, vmid: 200 }, [
          RESOURCES,
          statusOf('pve2', 200, 'lxc'),
        ]);
        expect(ok.isError, text(ok)).toBeFalsy();
      } finally {
        await listed.restore();
      }
    }
  });

  it("the guest's own status and the cluster's list give the same facts (an approval is bound to them)", async () => {
    const facts = ['tags', 'name', 'vm_type', 'status', 'qmpstatus', 'template', 'lock'];
    // Rules that read every fact and fire for none of these guests (their nodes are online).
    const never = facts.map((fact) =>
      fact === 'tags'
        ? { path: 'target.tags', op: 'contains', value: 'never' }
        : fact === 'status'
          ? { path: 'target.status', op: 'eq', value: 'unknown' }
          : { path: `target.${fact}`, op: 'eq', value: 'never' },
    );
    const both = await setPolicy({
      version: '1',
      default: 'allow',
      tools: { pve_get_vm_status: { deny_if: never }, pve_api_request: { deny_if: never } },
    });
    try {
      const since = Date.now();
      // A running VM, a paused one (the list carries QEMU's state as its status), a template, a
      // locked container, a stopped container.
      const guests = [
        { node: 'pve1', vmid: 100, vm_type: 'qemu' },
        { node: 'pve2', vmid: 103, vm_type: 'qemu' },
        { node: 'pve1', vmid: 9000, vm_type: 'qemu' },
        { node: 'pve2', vmid: 201, vm_type: 'lxc' },
        { node: 'pve3', vmid: 301, vm_type: 'lxc' },
      ];
      const expected = {
        100: { tags: ['prod', 'web'], status: 'running', qmpstatus: 'running', template: false },
        103: { tags: ['ci'], status: 'running', qmpstatus: 'paused' },
        9000: { status: 'stopped', template: true },
        201: { tags: ['infra', 'monitoring'], status: 'running', lock: 'backup' },
        301: { tags: ['legacy'], status: 'stopped', template: false },
      };
      expect((await sim.api('PUT', '/nodes/pve2/lxc/201/config', { lock: 'backup' })).status).toBe(
        200,
      );
      await sim.setQmpStatus(103, 'paused');
      for (const guest of guests) {
        await sim.clearLog();
        const shown = await call(client, 'pve_get_vm_status', guest);
        expect(shown.isError, text(shown)).toBeFalsy();
        expect(await sim.requestLines()).toEqual([
          `GET /api2/json/nodes/${guest.node}/${guest.vm_type}/${guest.vmid}/status/current`,
        ]);
        const raw = await call(client, 'pve_api_request', {
          method: 'GET',
          path: `/nodes/${guest.node}/${guest.vm_type}/${guest.vmid}/status/current`,
        });
        expect(raw.isError, text(raw)).toBeFalsy();
      }
      const records = await auditRecords(
        (r) => r.ts >= since && (r.tool === 'pve_get_vm_status' || r.tool === 'pve_api_request'),
      );
      expect(records).toHaveLength(2 * guests.length);
      for (const guest of guests) {
        const ofGuest = records.filter(
          (r) => r.args.vmid === guest.vmid || String(r.args.path).includes(`/${guest.vmid}/`),
        );
        const [own, listed] = [
          ofGuest.find((r) => r.tool === 'pve_get_vm_status')!.args['(target)'],
          ofGuest.find((r) => r.tool === 'pve_api_request')!.args['(target)'],
        ];
        expect(own).toMatchObject({
          vm_type: guest.vm_type,
          ...expected[guest.vmid as keyof typeof expected],
        });
        expect(own).toEqual(listed);
      }
    } finally {
      await both.restore();
    }
  });

  it('a tool whose rules name no target fact reads nothing more; one that does reads one request more, which its preview reuses', async () => {
    const preview = { node: 'pve1', vmid: 100 };
    // A confirmed call on a stopped guest: nothing to do, so nothing but reads.
    const confirmed = { node: 'pve2', vmid: 104, confirm: true };
    const requestsOf = async (args: Record<string, unknown>) => {
      await sim.clearLog();
      await call(client, 'pve_shutdown_vm', args);
      // Reads run side by side: compared as sets of requests, counted.
      return (await sim.requestLines()).sort();
    };
    const before = await requestsOf(preview);
    const beforeConfirmed = await requestsOf(confirmed);
    const judged = await setPolicy({
      version: '1',
      default: 'allow',
      tools: { pve_shutdown_vm: { deny_if: [{ ...notProd, value: 'nothing-has-this-tag' }] } },
    });
    try {
      expect(await requestsOf(confirmed)).toEqual([RESOURCES, ...beforeConfirmed].sort());
      // The preview shows the guest (its blast radius) from what the policy read.
      expect(await requestsOf(preview)).toEqual(before);
    } finally {
      await judged.restore();
    }
    // A rule for other callers only (principals) reads nothing for this one.
    const forAgents = await setPolicy({
      version: '1',
      default: 'allow',
      tools: {
        pve_shutdown_vm: {
          deny_if: [{ ...notProd, value: 'nothing-has-this-tag', principals: ['group:agents'] }],
        },
      },
    });
    try {
      expect(await requestsOf(confirmed)).toEqual(beforeConfirmed);
    } finally {
      await forAgents.restore();
    }
  });
});
