// The approval page's title and relative times (src/core/approval-title.ts).

import { describe, expect, it } from 'vitest';
import { approvalTitle, relativeTime } from '../../src/core/approval-title';

describe('approval titles', () => {
  it('says what the call does, to which guest, where', () => {
    expect(approvalTitle('pve_delete_vm', { node: 'pve2', vmid: 104, purge: true })).toBe(
      'Destroy VM 104 on pve2',
    );
    expect(approvalTitle('pve_stop_vm', { node: 'pve1', vmid: 110, vm_type: 'lxc' })).toBe(
      'Stop container 110 on pve1 (hard stop)',
    );
    expect(approvalTitle('pve_migrate_vm', { node: 'pve1', vmid: 100, target: 'pve3' })).toBe(
      'Move VM 100 from pve1 to pve3',
    );
    expect(approvalTitle('pve_delete_vm', { node: 'pve2', vmid: 104 }, 'win11-lab')).toBe(
      'Destroy VM 104 (win11-lab) on pve2',
    );
    expect(
      approvalTitle('pve_rollback_snapshot', { node: 'pve2', vmid: 120, snapname: 's1' }, 'f'),
    ).toBe('Roll VM 120 (f) on pve2 back to snapshot "s1"');
    expect(approvalTitle('pve_some_future_tool', {})).toBe('Run pve_some_future_tool');
    expect(
      approvalTitle('pve_create_qemu_vm', { node: 'pve1', name: 'x'.repeat(300) }),
    ).toHaveLength(160);
  });

  it('names the cluster where the call names one (a vmid is one guest only within it)', () => {
    expect(approvalTitle('pve_stop_vm', { cluster: 'prod', node: 'pve2', vmid: 104 })).toBe(
      'Stop VM 104 on prod/pve2 (hard stop)',
    );
    expect(
      approvalTitle('pve_migrate_vm', { cluster: 'lab', node: 'pve1', vmid: 100, target: 'pve3' }),
    ).toBe('Move VM 100 from lab/pve1 to pve3');
    expect(approvalTitle('pve_delete_backup', { cluster: 'prod', volume: 'pbs:backup/x' })).toBe(
      'Delete backup pbs:backup/x on cluster prod',
    );
    expect(
      approvalTitle('pve_api_request', { cluster: 'lab', method: 'GET', path: '/version' }),
    ).toBe('Raw API: GET /version on cluster lab');
    // Cut at 160 characters, it still says where.
    const long = approvalTitle('pve_api_request', {
      cluster: 'prod',
      method: 'POST',
      path: `/nodes/pve1/${'x'.repeat(300)}`,
    });
    expect(long).toHaveLength(160);
    expect(long.endsWith('x… on cluster prod')).toBe(true);
  });

  it('says when in minutes, either way', () => {
    const now = Date.UTC(2026, 11, 1, 12, 0, 0);
    expect(relativeTime(now + 14 * 60_000 + 20_000, now)).toBe('in 14 minutes');
    expect(relativeTime(now + 60_000, now)).toBe('in 1 minute');
    expect(relativeTime(now + 10_000, now)).toBe('in under a minute');
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 hours ago');
  });
});
