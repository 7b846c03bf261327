// Storage replication jobs as PVE::ReplicationConfig keeps them (replication.cfg): the check
// destroy runs without purge (check_for_existing_jobs), remove_vmid_jobs for purge=1, and the
// target switch after a guest migrated to its replication target.
import type { ClusterState, ReplicationJob } from './cluster-state.ts';

/** The jobs of one guest, by id. */
export function guestJobs(state: ClusterState, vmid: number): [string, ReplicationJob][] {
  return [...state.replication].filter(([, job]) => job.guest === vmid);
}

/** check_for_existing_jobs: the text it dies with when the guest still has a job. */
export function existingJobError(state: ClusterState, vmid: number): string | undefined {
  const [id] = guestJobs(state, vmid)[0] ?? [];
  return id === undefined
    ? undefined
    : `There is a replication job '${id}' for guest '${vmid}' - Please remove that first.`;
}

/** remove_vmid_jobs: drop every job of the guest from replication.cfg. */
export function removeGuestJobs(state: ClusterState, vmid: number): void {
  for (const [id] of guestJobs(state, vmid)) state.replication.delete(id);
}

/**
 * switch_replication_job_target after a migration from `from` to `to`: the job that replicated to
 * `to` now replicates back to `from`, and every job of the guest has `to` as its source.
 */
export function switchJobTarget(state: ClusterState, vmid: number, from: string, to: string): void {
  for (const [, job] of guestJobs(state, vmid)) {
    if (job.target === to) job.target = from;
    job.source = to;
  }
}
