// The blast radius in words (src/proxmox/blast-radius-text.ts): every fact in a fixed order,
// an unreadable fact named with why, long lists cut with a count, ages in hours then days.

import { describe, expect, it } from 'vitest';
import { ageInWords, type BlastRadius } from '../../src/proxmox/blast-radius';
import { blastRadiusLines, blastRadiusRows } from '../../src/proxmox/blast-radius-text';

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);

const radius: BlastRadius = {
  guest: { node: 'pve2', vmid: 104, vm_type: 'qemu', name: 'win11-lab' },
  read_at: new Date(NOW).toISOString(),
  status: 'stopped',
  replication: [],
  newest_backup: null,
  backup_count: 0,
  protection: false,
  lock: null,
  snapshots: Array.from({ length: 12 }, (_, i) => `s${i}`),
  pool: null,
  tags: [],
  disks: [{ key: 'scsi0', volume: 'local-lvm:vm-104-disk-1', size: '80G' }],
  warnings: ['No backup of this guest was found.'],
  unreadable: { ha: 'Proxmox did not answer GET /cluster/ha/resources within 3 s.' },
};

describe('the blast radius in words', () => {
  it('names every fact, an unreadable one with why', () => {
    expect(blastRadiusRows(radius, NOW).map((r) => `${r.label}: ${r.value}`)).toEqual([
      'State: stopped',
      'HA: could not be read: Proxmox did not answer GET /cluster/ha/resources within 3 s.',
      'Replication: none',
      'Newest backup: none found on the backup storages pve2 sees (that the API token may list)',
      'Protection: off',
      'Lock: none',
      'Snapshots: s0, s1, s2, s3, s4, s5, s6, s7, s8, s9 and 2 more',
      'Pool: none',
      'Tags: none',
      'Disks: scsi0 local-lvm:vm-104-disk-1 (80G)',
    ]);
    expect(blastRadiusRows(radius, NOW).find((r) => r.fact === 'ha')?.unreadable).toBe(true);
    expect(blastRadiusLines(radius, NOW).slice(0, 2)).toEqual([
      'Warning: No backup of this guest was found.',
      'What this touches:',
    ]);
  });

  it('says ages in hours up to two days, then in days', () => {
    expect(ageInWords(3_600_000)).toBe('1 hour');
    expect(ageInWords(30 * 3_600_000)).toBe('30 hours');
    expect(ageInWords(9 * 86_400_000 + 3_600_000)).toBe('9 days');
  });
});
