// readBlastRadius against the simulator over HTTP, with the real Proxmox client: what it reads
// when a storage is slow or unreachable, when the API token may not see pools or backups, and
// what it warns about before a destroy. A fact it cannot know is named unreadable, with why;
// "none" is said only when the token could have seen one.

import { describe, expect, it } from 'vitest';
import { readBlastRadius } from '../../src/proxmox/blast-radius.ts';
import { pveFor, useSimulator } from '../support/sim-harness.ts';

const client = useSimulator('blast');

const VM120 = { node: 'pve2', vmid: 120, vm_type: 'qemu' as const };
const VM104 = { node: 'pve2', vmid: 104, vm_type: 'qemu' as const };

describe('the blast radius read', () => {
  it('names a backup storage that does not answer in time, and does not call the backup missing', async () => {
    const sim = client();
    await sim.fault({ path: '^/nodes/pve2/storage/pbs-backup/content$', hang: true });
    const started = Date.now();
    const b = await readBlastRadius(pveFor(sim), VM120, { lossy: 'destroy it', budgetMs: 1_000 });
    // Answered, not held by the storage that never answers (a bound far from the 1 s budget,
    // so that a busy machine cannot fail it).
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(b.newest_backup).toBeUndefined();
    expect(b.unreadable.newest_backup).toMatch(
      /^pbs-backup: Proxmox did not answer GET \/nodes\/pve2\/storage\/pbs-backup\/content within 1 s\.$/,
    );
    expect(b.warnings).toEqual([
      expect.stringMatching(
        /^Whether a backup of this guest exists could not be read \(pbs-backup: .*\): check before you destroy it\.$/,
      ),
    ]);
    // The other facts are all there.
    expect(b.ha).toEqual({ managed: true, state: 'started' });
    expect(b.pool).toBe('prod');
  });

  it('names an inactive backup storage as not read', async () => {
    const sim = client();
    const listed = (await sim.api('GET', '/nodes/pve2/storage', { query: { content: 'backup' } }))
      .body.data as Record<string, unknown>[];
    await sim.fault({
      path: '^/nodes/pve2/storage$',
      status: 200,
      body: { data: listed.map((s) => (s.storage === 'pbs-backup' ? { ...s, active: 0 } : s)) },
    });
    const b = await readBlastRadius(pveFor(sim), VM120, { lossy: 'destroy it' });
    expect(b.unreadable.newest_backup).toBe('pbs-backup: inactive (Proxmox cannot reach it)');
    expect(b.warnings[0]).toMatch(/^Whether a backup of this guest exists could not be read/);
  });

  it('says a pool and backups are not visible to a token without Pool.Audit and VM.Backup', async () => {
    const sim = client();
    const b = await readBlastRadius(pveFor(sim, 'audit'), VM120, { lossy: 'destroy it' });
    expect(b.pool).toBeUndefined();
    expect(b.unreadable.pool).toMatch(/^none visible: the API token lacks Pool\.Audit on \/pool/);
    expect(b.newest_backup).toBeUndefined();
    expect(b.unreadable.newest_backup).toMatch(
      /^none visible: the API token lacks VM\.Backup on \/vms\/120/,
    );
    expect(b.warnings[0]).toMatch(/^Whether a backup of this guest exists could not be read/);
    // What the token does see is there.
    expect(b.ha).toEqual({ managed: true, state: 'started' });
    expect(b.replication).toEqual([
      { id: '120-0', target: 'pve3', schedule: '*/15', disabled: false },
    ]);
  });

  it('warns before destroying a guest with no backup, and when Proxmox will refuse without purge', async () => {
    const sim = client();
    const none = await readBlastRadius(pveFor(sim), VM104, {
      lossy: 'destroy it',
      withoutPurge: true,
    });
    expect(none.newest_backup).toBeNull();
    expect(none.backup_count).toBe(0);
    expect(none.warnings).toEqual([
      'No backup of this guest was found on the backup storages pve2 shows the API token: if you destroy it, nothing can bring back what is lost.',
    ]);
    const bound = await readBlastRadius(pveFor(sim), VM120, {
      lossy: 'destroy it',
      withoutPurge: true,
    });
    expect(bound.warnings).toContain(
      'Proxmox refuses to destroy a guest in HA or with replication jobs unless purge: true (which also removes it from them): this call, as asked, will be refused.',
    );
    const purged = await readBlastRadius(pveFor(sim), VM120, { lossy: 'destroy it' });
    expect(purged.warnings.some((w) => w.startsWith('Proxmox refuses'))).toBe(false);
  });
});
