// The seeded HA resources and replication jobs: the file server 120 and the database 102 are
// HA-managed (started); 120's disk on local-zfs is replicated from pve2 to pve3 every 15 minutes.
import type { HaResource, ReplicationJob } from './cluster-state.ts';

/** As the GUI writes them: the state plus the restart/relocate limits and failback. */
export function seedHaResources(): Map<string, HaResource> {
  return new Map<string, HaResource>([
    [
      'vm:120',
      {
        type: 'vm',
        state: 'started',
        max_restart: 1,
        max_relocate: 1,
        failback: 1,
        comment: 'Samba file server, replicated to pve3',
      },
    ],
    ['vm:102', { type: 'vm', state: 'started', max_restart: 2, max_relocate: 1, failback: 1 }],
  ]);
}

export function seedReplication(): Map<string, ReplicationJob> {
  return new Map<string, ReplicationJob>([
    [
      '120-0',
      { type: 'local', guest: 120, jobnum: 0, target: 'pve3', schedule: '*/15', source: 'pve2' },
    ],
  ]);
}
