// What a call would hit, for the person who judges it: a rollback of VM 120 (files01), which the
// HA manager manages, which is replicated to pve3 and whose newest backup is nine days old. The
// preview and the approval page show the same facts and warn about the backup; a fact Proxmox
// does not give in time, or refuses, is named as unreadable (with why) and the rest still shows.

import { describe, expect, it } from 'vitest';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { openAsDevUser } from '../support/form-browser';
import { call } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { APPROVALS_POLICY } from '../support/policies/approvals';
import { usePolicy } from '../support/worker/policy';

usePolicy(APPROVALS_POLICY, asEditor());

const ROLLBACK = { node: 'pve2', vmid: 120, snapname: 'before_samba_update' };

interface Radius {
  guest: Record<string, unknown>;
  warnings: string[];
  unreadable: Record<string, string>;
  newest_backup?: { volid: string; storage: string; age_hours: number; verified: string | null };
  [fact: string]: unknown;
}

const STALE =
  /^The newest backup is (9|10) days old \(pbs-backup:backup\/vm\/120\/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\): if you roll it back to before_samba_update, what changed since that backup cannot be brought back\.$/;

async function agent() {
  return (await connectSignedIn('http', { user: 'ann@example.com', groups: 'ops' })).client;
}

async function approvalPage(client: Awaited<ReturnType<typeof agent>>) {
  const pending = await call(client, 'pve_rollback_snapshot', { ...ROLLBACK, confirm: true });
  expect(pending.isError).toBe(true);
  const { approval_id: id } = pending.structuredContent as { approval_id: string };
  const page = await openAsDevUser(
    new Browser(),
    `http://localhost/approvals/${id}`,
    'lead1@example.com',
    'ops,leads',
  );
  expect(page.status).toBe(200);
  return page.html;
}

/** The text of the page's blast-radius row for `fact`. */
function row(html: string, fact: string): string | undefined {
  const m = new RegExp(`<tr data-fact="${fact}"[^>]*>(.*?)</tr>`).exec(html);
  return m?.[1]
    ?.replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

describe('the blast radius of a rollback of an HA-managed, replicated VM with an old backup', () => {
  it('is in the preview: every fact, and a warning about the backup', async () => {
    await sim.reset();
    const preview = await call(await agent(), 'pve_rollback_snapshot', ROLLBACK);
    expect(preview.isError, JSON.stringify(preview.content)).toBeFalsy();
    const b = (preview.structuredContent as { blast_radius: Radius }).blast_radius;
    expect(b).toMatchObject({
      guest: { node: 'pve2', vmid: 120, vm_type: 'qemu', name: 'files01' },
      status: 'running',
      ha: { managed: true, state: 'started' },
      replication: [{ id: '120-0', target: 'pve3', schedule: '*/15', disabled: false }],
      protection: false,
      lock: null,
      snapshots: ['before_samba_update'],
      pool: 'prod',
      tags: ['files', 'prod'],
      disks: [{ key: 'scsi0', volume: 'local-zfs:vm-120-disk-0', size: '64G' }],
      backup_count: 2,
      unreadable: {},
    });
    expect(b.newest_backup).toMatchObject({ storage: 'pbs-backup', verified: 'ok' });
    expect(b.newest_backup!.age_hours).toBeGreaterThan(8 * 24);
    expect(b.newest_backup!.age_hours).toBeLessThan(11 * 24);
    expect(b.warnings).toEqual([expect.stringMatching(STALE)]);
    const text = (preview.content as { text: string }[])[0]!.text;
    expect(text).toMatch(/^Warning: The newest backup is (9|10) days old/m);
    // The preview names the guest once, before the facts.
    expect(text).toContain('VM 120 (files01) on pve2 is running.');
    expect(text.split('files01').length - 1).toBe(1);
    expect(text).toContain('What this touches:');
    expect(text).toContain('  HA: managed by the HA manager (requested state started)');
    expect(text).toContain('  Replication: 120-0 to pve3 (schedule */15)');
    expect(text).toMatch(
      /^ {2}Newest backup: (9|10) days old, pbs-backup:backup\/vm\/120\/\S+ \(verification ok, 2 found\)$/m,
    );
    expect(text).toContain('  Disks: scsi0 local-zfs:vm-120-disk-0 (64G)');
    expect(await sim.writes()).toEqual([]);
  });

  it('is on the approval page, with the title, the warning and the arguments in words', async () => {
    await sim.reset();
    const html = await approvalPage(await agent());
    expect(html).toContain(
      '<h1 id="approval-title">Roll VM 120 (files01) on pve2 back to snapshot &quot;before_samba_update&quot;?</h1>',
    );
    expect(html).toMatch(
      /<div class="box warn" role="alert" id="warnings"><p><strong>Warning:<\/strong> The newest backup is (9|10) days old/,
    );
    expect(row(html, 'status')).toBe('State running');
    expect(row(html, 'ha')).toBe('HA managed by the HA manager (requested state started)');
    expect(row(html, 'replication')).toBe('Replication 120-0 to pve3 (schedule */15)');
    expect(row(html, 'newest_backup')).toMatch(
      /^Newest backup (9|10) days old, pbs-backup:backup\/vm\/120\//,
    );
    expect(row(html, 'protection')).toBe('Protection off');
    expect(row(html, 'lock')).toBe('Lock none');
    expect(row(html, 'snapshots')).toBe('Snapshots before_samba_update');
    expect(row(html, 'pool')).toBe('Pool prod');
    expect(row(html, 'tags')).toBe('Tags files, prod');
    expect(row(html, 'disks')).toBe('Disks scsi0 local-zfs:vm-120-disk-0 (64G)');
    // The arguments in words, with what each means; how the call runs (confirm) is left out.
    expect(html).toMatch(
      /<table id="arguments">.*<th scope="row">snapname<\/th><td><strong class="uri">before_samba_update<\/strong><br><small>[^<]+<\/small>/s,
    );
    expect(html).not.toMatch(/<table id="arguments">.*<th scope="row">confirm<\/th>/s);
    // The exact request is still there for whoever wants it.
    expect(html).toMatch(/<summary>The exact Proxmox request<\/summary>/);
    expect(await sim.writes()).toEqual([]);
  });

  it('names a fact Proxmox did not give in time, or refused, and still shows the rest', async () => {
    await sim.reset();
    const client = await agent();
    // Two of each: one for the preview, one for the call that asks for approval.
    await sim.fault({ method: 'GET', path: '^/cluster/ha/resources$', hang: true, times: 2 });
    await sim.fault({
      method: 'GET',
      path: '^/cluster/replication$',
      status: 403,
      reason: 'Permission check failed (/, Sys.Audit)',
      body: { data: null },
      times: 2,
    });
    const started = Date.now();
    const preview = await call(client, 'pve_rollback_snapshot', ROLLBACK);
    // Answered, not held by the HA read that never answers (a bound a busy machine cannot fail).
    expect(Date.now() - started).toBeLessThan(15_000);
    const b = (preview.structuredContent as { blast_radius: Radius }).blast_radius;
    expect(b.ha).toBeUndefined();
    expect(b.replication).toBeUndefined();
    expect(b.unreadable).toEqual({
      ha: expect.stringMatching(/did not answer GET \/cluster\/ha\/resources within \d s/),
      replication: expect.stringMatching(/lacks the privilege Sys\.Audit on \//),
    });
    expect(b.status).toBe('running');
    expect(b.pool).toBe('prod');
    const text = (preview.content as { text: string }[])[0]!.text;
    expect(text).toMatch(/^ {2}HA: could not be read: Proxmox did not answer/m);
    expect(text).toMatch(/^ {2}Replication: could not be read: The Proxmox API token lacks/m);

    const html = await approvalPage(client);
    expect(html).toMatch(
      /<tr data-fact="ha" class="unreadable"><th scope="row">HA<\/th><td class="uri"><em>could not be read: Proxmox did not answer GET \/cluster\/ha\/resources within \d s\.<\/em>/,
    );
    expect(html).toMatch(
      /<tr data-fact="replication" class="unreadable">.*could not be read: The Proxmox API token lacks the privilege Sys\.Audit on \//,
    );
    expect(row(html, 'pool')).toBe('Pool prod');
    expect(await sim.writes()).toEqual([]);
  });
});
