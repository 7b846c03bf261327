// What qmrestore and vzrestore share: check_volume_access(..., 'backup') on the archive, telling a
// PBS snapshot from a vzdump file (which must exist on this node for a VM restore, as
// abs_filesystem_path checks), a fresh guest record, and the text of PBS repositories.
import { check } from '../access/permissions.ts';
import { hasPrivilege } from '../access/tokens.ts';
import type { StorageDef, Volume } from '../cluster/cluster-state.ts';
import { findVolume, parseVolname, parseVolumeId } from '../cluster/volumes.ts';
import { dieError } from '../schema/pve-error.ts';
import type { HandlerContext } from './handler-context.ts';
import { volumePath } from './storage-volume.ts';

export interface BackupArchive {
  readonly volid: string;
  readonly storage: StorageDef;
  readonly volname: string;
  readonly pbs: boolean;
  /** Its path on the node (a vzdump file) or pbs:// URL. */
  readonly path: string;
}

/**
 * check_volume_access($rpcenv, $user, $cfg, $vmid, $archive, 'backup'); `vmid` undefined where
 * the caller names no guest (extractconfig).
 */
export function checkBackupAccess(
  ctx: HandlerContext,
  vmid: number | undefined,
  archive: string,
): BackupArchive {
  if (!parseVolumeId(archive)) {
    throw dieError(
      'Only root can pass arbitrary filesystem paths. at /usr/share/perl5/PVE/Storage.pm line 652.',
    );
  }
  const { storage, volname, vtype, owner } = parseVolname(ctx.state, archive);
  if (vtype !== 'backup') {
    throw dieError(`unable to use volume ${archive} - content type needs to be 'backup'`);
  }
  const path = `/storage/${storage.id}`;
  if (!hasPrivilege(ctx.identity, path, 'Datastore.Allocate') && owner !== vmid) {
    if (owner === undefined) throw dieError(`missing privileges to access ${archive}`);
    check(ctx.identity, path, ['Datastore.AllocateSpace']);
    check(ctx.identity, `/vms/${owner}`, ['VM.Backup']);
  }
  return {
    volid: archive,
    storage,
    volname,
    pbs: storage.type === 'pbs',
    path: volumePath(storage, volname),
  };
}

/** The backup volume as this node sees it now (undefined once it is gone). */
export function archiveVolume(
  ctx: HandlerContext,
  archive: BackupArchive,
  node: string,
): Volume | undefined {
  return findVolume(ctx.state, node, archive.volid);
}

/** PVE::PBSClient::get_repository: user@server:datastore. */
export function pbsRepository(storage: StorageDef): string {
  const { username, server, datastore } = storage.extra;
  return `${String(username)}@${String(server)}:${String(datastore)}`;
}

/** A PBS snapshot's name (the volname without backup/). */
export const pbsSnapshot = (archive: BackupArchive) => archive.volname.replace(/^backup\//, '');

/** ctime(3) as vma prints it: "Mon Oct  6 02:00:03 2025". */
export function ctimeText(seconds: number): string {
  const d = new Date(seconds * 1000);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${time} ${d.getUTCFullYear()}`;
}
