// Backups over /mcp against the simulator: one taken to a directory storage and to a Proxmox
// Backup Server storage and then listed on each; restored as a new guest after a lead's approval;
// a restore over a running guest refused, over a stopped one with force after approval; a
// protected backup never deleted, another deleted with what remains said first.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decide } from '../support/worker/decide';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { openAsDevUser } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { GUEST_POLICY } from '../support/policies/guest';
import { usePolicy } from '../support/worker/policy';

usePolicy(GUEST_POLICY, asEditor());

let agent: Client;
beforeAll(async () => {
  await sim.reset();
  await sim.config({ taskDurationMs: 50 });
  agent = (await connectSignedIn('http', { user: 'dana@example.com', groups: 'dev' })).client;
});
afterAll(() => agent.close());

interface Listed {
  volid: string;
  vmid: number | null;
  notes: string | null;
  protected: boolean;
  verified?: string | null;
}

async function backups(node: string, storage: string, vmid: number): Promise<Listed[]> {
  const r = await call(agent, 'pve_list_backups', { node, storage, vmid });
  expect(r.isError, text(r)).toBeFalsy();
  return (r.structuredContent as { backups: Listed[] }).backups;
}

/** Asks, has a lead approve, asks again with the approval: the answer. */
async function approved(tool: string, args: Record<string, unknown>) {
  const pending = await call(agent, tool, args);
  expect(pending.isError, text(pending)).toBe(true);
  const { approval_id: id } = pending.structuredContent as { approval_id: string };
  expect((await decide(id, 'lee@example.com', 'approve', 'dev,leads')).html).toContain('Approved.');
  return call(agent, tool, { ...args, approval_id: id });
}

/** The requests an approval's page shows its approver, a row each and one per parameter. */
async function approverRows(id: string): Promise<string[]> {
  const opened = await openAsDevUser(
    new Browser(),
    `http://localhost/approvals/${id}`,
    'lee@example.com',
    'dev,leads',
  );
  return [
    ...opened.html.matchAll(
      /<th scope="row"><code>([^<]+)<\/code><\/th><td><code class="uri">([^<]*)<\/code>/g,
    ),
  ].map((m) => `${m[1]} ${m[2]}`);
}

describe('backups', () => {
  it('takes a backup to local and to the Proxmox Backup Server, and lists each', async () => {
    const before = await backups('pve1', 'local', 100);
    const preview = await call(agent, 'pve_create_backup', {
      node: 'pve1',
      vmid: 100,
      storage: 'local',
      notes: 'before {{guestname}} upgrade',
    });
    expect(text(preview)).toMatch(
      /Backs up VM 100 \(web01\) \(running\) on pve1 to local in snapshot mode: it keeps running/,
    );
    expect(await sim.writes()).toEqual([]);
    const local = await call(agent, 'pve_create_backup', {
      node: 'pve1',
      vmid: 100,
      storage: 'local',
      notes: 'before {{guestname}} upgrade',
      confirm: true,
      wait: true,
    });
    expect(local.isError, text(local)).toBeFalsy();
    expect((local.structuredContent as { task: { succeeded: boolean } }).task.succeeded).toBe(true);
    const after = await backups('pve1', 'local', 100);
    const made = after.filter((b) => !before.some((o) => o.volid === b.volid));
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      volid: expect.stringMatching(
        /^local:backup\/vzdump-qemu-100-\d{4}_\d\d_\d\d-\d\d_\d\d_\d\d\.vma\.zst$/,
      ),
      notes: 'before web01 upgrade',
      protected: false,
    });
    const pbsBefore = await backups('pve1', 'pbs-backup', 100);
    const pbs = await call(agent, 'pve_create_backup', {
      node: 'pve1',
      vmid: 100,
      storage: 'pbs-backup',
      protected: true,
      confirm: true,
      wait: true,
    });
    expect(pbs.isError, text(pbs)).toBeFalsy();
    const vzdump = (await sim.writes()).filter((w) => w.path.endsWith('/vzdump'));
    expect(vzdump.map((w) => w.body)).toEqual([
      'vmid=100&storage=local&mode=snapshot&compress=zstd&notes-template=before+%7B%7Bguestname%7D%7D+upgrade&remove=0',
      'vmid=100&storage=pbs-backup&mode=snapshot&protected=1&remove=0',
    ]);
    const pbsAfter = await backups('pve1', 'pbs-backup', 100);
    expect(pbsAfter.length).toBe(pbsBefore.length + 1);
    expect(pbsAfter[0]).toMatchObject({
      volid: expect.stringMatching(/^pbs-backup:backup\/vm\/100\/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      protected: true,
    });
    // The seeded ones carry their verification.
    expect(pbsAfter.some((b) => b.verified === 'ok')).toBe(true);
  });

  it('refuses compress on a Proxmox Backup Server and a guest on another node, sending nothing', async () => {
    await sim.clearLog();
    const compress = await call(agent, 'pve_create_backup', {
      node: 'pve1',
      vmid: 100,
      storage: 'pbs-backup',
      compress: 'zstd',
      confirm: true,
    });
    expect(text(compress)).toMatch(/compress: pbs-backup is a Proxmox Backup Server storage/);
    const elsewhere = await call(agent, 'pve_create_backup', {
      node: 'pve2',
      vmid: 100,
      storage: 'local',
      confirm: true,
    });
    expect(text(elsewhere)).toMatch(
      /VM 100 \(web01\) is on pve1, not pve2: a backup runs on the guest's node/,
    );
    expect(await sim.writes()).toEqual([]);
  });

  it('restores a backup as a new guest after a lead approves', async () => {
    const [newest] = await backups('pve1', 'local', 100);
    const preview = await call(agent, 'pve_restore_backup', {
      node: 'pve1',
      volume: newest!.volid,
    });
    expect(text(preview)).toMatch(
      /Restores local:backup\/vzdump-qemu-100-.* as VM 106 on pve1, with new MAC addresses\./,
    );
    await sim.clearLog();
    const args = { node: 'pve1', volume: newest!.volid, vmid: 106, confirm: true, wait: true };
    const done = await approved('pve_restore_backup', args);
    expect(done.isError, text(done)).toBeFalsy();
    const writes = await sim.writes();
    expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual(['POST /api2/json/nodes/pve1/qemu']);
    expect(writes[0]!.body).toBe(`vmid=106&unique=1&archive=${encodeURIComponent(newest!.volid)}`);
    const restored = await sim.guest(106);
    expect(restored.config.name).toBe('web01');
  });

  it('takes a paused VM for the running one it is: its backup stops it, and nothing restores over it', async () => {
    // The cluster's list shows a paused VM's QEMU state as its status, as pvestatd does.
    await sim.setQmpStatus(101, 'paused');
    await sim.clearLog();
    try {
      const preview = await call(agent, 'pve_create_backup', {
        node: 'pve1',
        vmid: 101,
        storage: 'local',
        mode: 'stop',
      });
      expect(text(preview)).toMatch(
        /Backs up VM 101 \(web02\) \(paused\) on pve1 to local in stop mode: it is shut down for the backup and started again afterwards/,
      );
      const [pbs] = await backups('pve2', 'pbs-backup', 100);
      const over = await call(agent, 'pve_restore_backup', {
        node: 'pve1',
        volume: pbs!.volid,
        vmid: 101,
        force: true,
      });
      expect(text(over)).toMatch(/VM 101 \(web02\) is running: shut it down first/);
      expect(await sim.writes()).toEqual([]);
    } finally {
      await sim.setQmpStatus(101, 'running');
    }
  });

  it('refuses to restore over a running guest, and over a stopped one restores only with force and approval', async () => {
    const [pbs] = await backups('pve2', 'pbs-backup', 100);
    await sim.clearLog();
    const running = await call(agent, 'pve_restore_backup', {
      node: 'pve1',
      volume: pbs!.volid,
      vmid: 101,
      force: true,
    });
    expect(text(running)).toMatch(/VM 101 \(web02\) is running: shut it down first/);
    // Even approved, a confirmed restore over the running guest is refused before anything is sent.
    const approvedRunning = await approved('pve_restore_backup', {
      node: 'pve1',
      volume: pbs!.volid,
      vmid: 101,
      force: true,
      confirm: true,
    });
    expect(approvedRunning.isError).toBe(true);
    expect(text(approvedRunning)).toMatch(/VM 101 \(web02\) is running: shut it down first/);
    const noForce = await call(agent, 'pve_restore_backup', {
      node: 'pve2',
      volume: pbs!.volid,
      vmid: 104,
    });
    expect(text(noForce)).toMatch(
      /VM 104 \(win11-lab\) exists: restoring over it replaces it, which needs force: true/,
    );
    const preview = await call(agent, 'pve_restore_backup', {
      node: 'pve2',
      volume: pbs!.volid,
      vmid: 104,
      force: true,
    });
    expect(text(preview)).toMatch(
      /This replaces VM 104 \(win11-lab\) for good: its configuration, its disks \(efidisk0 local-lvm:vm-104-disk-0 \(4M\), scsi0 local-lvm:vm-104-disk-1 \(80G\), tpmstate0 local-lvm:vm-104-disk-2 \(4M\)\) and its snapshots \(none\) are lost\./,
    );
    expect(await sim.writes()).toEqual([]);
    const done = await approved('pve_restore_backup', {
      node: 'pve2',
      volume: pbs!.volid,
      vmid: 104,
      force: true,
      confirm: true,
      wait: true,
    });
    expect(done.isError, text(done)).toBeFalsy();
    expect((await sim.writes()).map((w) => w.body)).toEqual([
      `vmid=104&force=1&archive=${encodeURIComponent(pbs!.volid)}`,
    ]);
    expect((await sim.guest(104)).config.name).toBe('web01');
  });

  it('shows the approver of a restore with force where no guest is the request that goes out: a new guest, without force', async () => {
    const [newest] = await backups('pve1', 'local', 100);
    const volid = encodeURIComponent(newest!.volid);
    const args = { node: 'pve1', volume: newest!.volid, vmid: 3300, force: true };
    const preview = await call(agent, 'pve_restore_backup', args);
    expect(text(preview)).toContain('No guest 3300 exists: it is restored as a new one');
    const shown = `POST /nodes/pve1/qemu with vmid=3300, unique=1, archive=${newest!.volid}`;
    expect(text(preview)).toContain(`Would send ${shown}.`);
    await sim.clearLog();
    const pending = await call(agent, 'pve_restore_backup', { ...args, confirm: true });
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    expect(await approverRows(id)).toEqual([
      'request POST /nodes/pve1/qemu',
      'vmid 3300',
      'unique 1',
      `archive ${newest!.volid}`,
    ]);
    expect((await decide(id, 'lee@example.com', 'approve', 'dev,leads')).html).toContain(
      'Approved.',
    );
    const done = await call(agent, 'pve_restore_backup', {
      ...args,
      confirm: true,
      approval_id: id,
    });
    expect(done.isError, text(done)).toBeFalsy();
    expect((await sim.writes()).map((w) => `${w.method} ${w.path} ${w.body}`)).toEqual([
      `POST /api2/json/nodes/pve1/qemu vmid=3300&unique=1&archive=${volid}`,
    ]);
  });

  it('spends no approval of a restore as a new guest once a guest has appeared at its id: the requests would differ', async () => {
    const [newest] = await backups('pve1', 'local', 100);
    const args = { node: 'pve1', volume: newest!.volid, vmid: 3301, force: true, confirm: true };
    const pending = await call(agent, 'pve_restore_backup', args);
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    expect(await approverRows(id)).toContain('unique 1');
    expect((await decide(id, 'lee@example.com', 'approve', 'dev,leads')).html).toContain(
      'Approved.',
    );
    // Someone makes a VM 3301 in Proxmox meanwhile: the same arguments would now replace it.
    const made = await sim.api('POST', '/nodes/pve1/qemu', { vmid: '3301', name: 'appeared' });
    expect(made.status).toBe(200);
    await expect.poll(async () => (await sim.guest(3301)).config.name).toBe('appeared');
    await sim.clearLog();
    const refused = await call(agent, 'pve_restore_backup', { ...args, approval_id: id });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain(
      'What this call would send to Proxmox now is not what was approved',
    );
    expect(await sim.writes()).toEqual([]);
    expect((await sim.guest(3301)).config.name).toBe('appeared');
  });

  it('never deletes a protected backup, and says what remains before deleting another', async () => {
    const local = await backups('pve1', 'local', 100);
    const kept = local.find((b) => b.protected)!;
    await sim.clearLog();
    const refused = await call(agent, 'pve_delete_backup', {
      node: 'pve1',
      volume: kept.volid,
      confirm: true,
    });
    expect(text(refused)).toMatch(
      /is protected: Proxmox refuses to delete it, and so does this tool/,
    );
    expect(await sim.writes()).toEqual([]);
    const gone = local.find((b) => !b.protected && b.notes === 'nightly')!;
    const preview = await call(agent, 'pve_delete_backup', { node: 'pve1', volume: gone.volid });
    expect(text(preview)).toMatch(
      new RegExp(`${local.length - 1} other backups of 100 remain on local`),
    );
    const done = await call(agent, 'pve_delete_backup', {
      node: 'pve1',
      volume: gone.volid,
      confirm: true,
      wait: true,
    });
    expect(done.isError, text(done)).toBeFalsy();
    expect((await backups('pve1', 'local', 100)).map((b) => b.volid)).not.toContain(gone.volid);
  });
});
