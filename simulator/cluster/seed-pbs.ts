// The seeded backups on the Proxmox Backup Server storage `pbs-backup`, as PBSPlugin lists a
// datastore's snapshots: volnames `backup/<vm|ct>/<vmid>/<UTC time>`, format pbs-vm/pbs-ct, the
// guest's name as notes (vzdump's default notes template), and the last verify job's result
// (none on the oldest: it was taken before the verify job was set up).
import type { Volume } from './cluster-state.ts';

const DAY = 86_400;

interface PbsSpec {
  readonly type: 'vm' | 'ct';
  readonly vmid: number;
  readonly days: number;
  readonly size: number;
  readonly notes: string;
  readonly verified?: 'ok' | 'failed';
  readonly protected?: boolean;
}

const SPECS: readonly PbsSpec[] = [
  { type: 'vm', vmid: 100, days: 0, size: 34_359_739_198, notes: 'web01', verified: 'ok' },
  { type: 'ct', vmid: 110, days: 2, size: 1_212_443_098, notes: 'dns01', verified: 'failed' },
  { type: 'vm', vmid: 120, days: 9, size: 68_719_477_566, notes: 'files01', verified: 'ok' },
  {
    type: 'vm',
    vmid: 120,
    days: 16,
    size: 68_719_477_566,
    notes: 'files01, kept: last backup before the Samba 4.22 test',
    protected: true,
  },
];

/** The nightly job starts at 02:00 UTC; today's backup is never in the future, though. */
function backupTime(nowSec: number, days: number): number {
  const midnight = Math.floor(nowSec / DAY) * DAY;
  if (days > 0) return midnight - days * DAY + 7_207;
  return midnight + Math.min(7_207, Math.floor((nowSec - midnight) / 2));
}

const hex = (n: number) => n.toString(16).toUpperCase().padStart(8, '0');

/** A PBS task id: UPID:node:pid:pstart:task:starttime:type:id:user: (ids systemd-escaped). */
function verifyUpid(startedAt: number, index: number): string {
  const id = 'store1\\x3av\\x2d3f2a91c4\\x2d5b7e';
  return `UPID:pbs01:${hex(4_772 + index)}:${hex(1_689_570 + index * 97)}:${hex(7 + index)}:${hex(startedAt)}:verificationjob:${id}:root@pam:`;
}

/** print_volid: the snapshot's backup time, in UTC, names it. */
function volname(spec: PbsSpec, at: number): string {
  const time = new Date(at * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `backup/${spec.type}/${spec.vmid}/${time}`;
}

export function pbsBackups(now: number): Volume[] {
  const nowSec = Math.floor(now / 1000);
  return SPECS.map((spec, index) => {
    const at = backupTime(nowSec, spec.days);
    const verifiedAt = at + Math.min(2_700, Math.floor((nowSec - at) / 2));
    return {
      storage: 'pbs-backup',
      node: undefined,
      volname: volname(spec, at),
      vtype: 'backup',
      format: `pbs-${spec.type}`,
      size: spec.size,
      ctime: at,
      owner: spec.vmid,
      subtype: spec.type === 'vm' ? 'qemu' : 'lxc',
      notes: spec.notes,
      ...(spec.protected ? { protected: true } : {}),
      ...(spec.verified
        ? { verification: { state: spec.verified, upid: verifyUpid(verifiedAt, index) } }
        : {}),
    };
  });
}
