// One volume of a storage (pve-storage API2/Storage/Content.pm `info` and `delete`). The volume
// may be a full volume ID or a name on the storage of the path; everything below .../content/ is
// that one parameter (fragmentDelimiter ''), so volume IDs with '/' need no escaping.
// GET checks read access (check_volume_access) and answers path, size, used, format and, for
// backups, notes and protection. DELETE needs Datastore.Allocate, or for a backup
// Datastore.AllocateSpace plus VM.Backup on its guest, and forks an `imgdel` task that frees the
// volume; a protected backup makes that task fail, as the storage plugin refuses it.
import { ALL_USERS, check, checkAny } from '../access/permissions.ts';
import { hasPrivilege } from '../access/tokens.ts';
import { dataFraction } from '../cluster/backups.ts';
import type { StorageDef, Task, Volume } from '../cluster/cluster-state.ts';
import { freeLines } from '../cluster/storage-log.ts';
import { spawnTask, WorkerDie } from '../cluster/tasks.ts';
import { findVolume, parseVolname, parseVolumeId, removeVolume } from '../cluster/volumes.ts';
import { dieError, paramError } from '../schema/pve-error.ts';
import { requestNode, str } from './guest-helpers.ts';
import { NODE_PARAM, type HandlerContext, type Route } from './handler-context.ts';

/** $real_volume_id: a full volid (its storage must match the path's) or a volname. */
function realVolumeId(ctx: HandlerContext): { volid: string; storeid: string } {
  const volume = String(ctx.params.volume);
  const storeid = str(ctx, 'storage');
  if (volume.includes(':')) {
    const parsed = parseVolumeId(volume);
    if (!parsed) throw paramError({ volume: `unable to parse volume ID '${volume}'\n` });
    if (storeid && parsed.storeid !== storeid) {
      throw paramError({ volume: `storage ID mismatch (${parsed.storeid} != ${storeid})\n` });
    }
    return { volid: volume, storeid: parsed.storeid };
  }
  if (!storeid) throw paramError({ volume: 'no storage specified - incomplete volume ID' });
  return { volid: `${storeid}:${volume}`, storeid };
}

/** check_volume_access with no guest: what may read this volume. */
function checkVolumeAccess(ctx: HandlerContext, volid: string): void {
  const { identity } = ctx;
  const { storage, vtype, owner } = parseVolname(ctx.state, volid);
  const path = `/storage/${storage.id}`;
  if (hasPrivilege(identity, path, 'Datastore.Allocate')) return;
  if (vtype === 'iso' || vtype === 'vztmpl' || vtype === 'import') {
    checkAny(identity, path, ['Datastore.AllocateSpace', 'Datastore.Audit']);
  } else if (vtype === 'backup' && owner !== undefined) {
    check(identity, path, ['Datastore.AllocateSpace']);
    check(identity, `/vms/${owner}`, ['VM.Backup']);
  } else if ((vtype === 'images' || vtype === 'rootdir') && owner !== undefined) {
    check(identity, path, ['Datastore.Audit']);
    check(identity, `/vms/${owner}`, ['VM.Config.Disk']);
  } else {
    throw dieError(`missing privileges to access ${volid}`);
  }
}

const DIR_SUBDIRS: Readonly<Record<string, string>> = {
  backup: 'dump',
  iso: 'template/iso',
  vztmpl: 'template/cache',
  import: 'import',
  snippets: 'snippets',
};

/** PVE::Storage::path for the simulator's storage types. */
export function volumePath(storage: StorageDef, volname: string): string {
  if (storage.type === 'dir') {
    const [kind = '', ...rest] = volname.split('/');
    const sub = DIR_SUBDIRS[kind] ?? kind;
    return `${storage.path ?? '/var/lib/vz'}/${sub}/${rest.join('/')}`;
  }
  if (storage.type === 'lvmthin') return `/dev/${String(storage.extra.vgname)}/${volname}`;
  if (storage.type === 'rbd') {
    const pool = String(storage.extra.pool);
    return `rbd:${pool}/${volname}:conf=/etc/pve/ceph.conf:id=admin:keyring=/etc/pve/priv/ceph/${storage.id}.keyring`;
  }
  if (storage.type === 'zfspool') {
    const name = volname.split('/').pop() ?? volname;
    const pool = String(storage.extra.pool);
    return /^(subvol|basevol)-/.test(name) ? `/${pool}/${name}` : `/dev/zvol/${pool}/${name}`;
  }
  const repo = `${String(storage.extra.username)}@${String(storage.extra.server)}:${String(storage.extra.datastore)}`;
  return `pbs://${repo}/${volname.replace(/^backup\//, '')}`;
}

function volumeInfo(ctx: HandlerContext): unknown {
  requestNode(ctx);
  const { volid } = realVolumeId(ctx);
  checkVolumeAccess(ctx, volid);
  const { storage, volname, vtype } = parseVolname(ctx.state, volid);
  const volume = findVolume(ctx.state, String(ctx.params.node), volid);
  if (!volume) {
    if (storage.type === 'pbs') {
      throw dieError(
        `proxmox-backup-client failed: Error: unable to load blob '"/mnt/datastore/${String(storage.extra.datastore)}/${volname.replace(/^backup\//, '')}/index.json.blob"' - No such file or directory (os error 2)`,
      );
    }
    throw dieError(`volume_size_info on '${volid}' failed - no format`);
  }
  const pbs = storage.type === 'pbs';
  const used =
    storage.type === 'dir' || pbs
      ? volume.size
      : Math.round(volume.size * dataFraction(volume.owner ?? 0));
  return {
    path: volumePath(storage, volname),
    size: volume.size,
    used,
    format: pbs || volume.format === 'subvol' ? volume.format : 'raw',
    ...attributes(storage, vtype, volume),
  };
}

/** get_volume_attribute('notes'/'protected'): backups only; PBS answers protection as JSON. */
function attributes(storage: StorageDef, vtype: string, volume: Volume): Record<string, unknown> {
  if (vtype !== 'backup') return {};
  if (storage.type === 'pbs') {
    return { notes: volume.notes ?? '', protected: volume.protected === true };
  }
  return { notes: volume.notes ?? '', protected: volume.protected ? 1 : 0 };
}

/** vdisk_free / the plugin's free_image: what makes it fail for this volume. */
function freeError(ctx: HandlerContext, storage: StorageDef, volname: string, volume?: Volume) {
  const volid = `${storage.id}:${volname}`;
  if (ctx.state.volumes.some((v) => v.parent === volid)) {
    return `base volume '${volname}' is still in use by linked clones`;
  }
  if (volume?.protected) {
    return storage.type === 'pbs'
      ? 'proxmox-backup-client failed: Error: cannot remove protected snapshot'
      : `cannot remove protected volume '${volname}' on '${storage.id}'`;
  }
  if (volume || storage.type === 'dir') return undefined;
  const name = volname.split('/').pop() ?? volname;
  if (storage.type === 'lvmthin') {
    const lv = `${String(storage.extra.vgname)}/${name}`;
    return `lvremove '${lv}' error:   Failed to find logical volume "${lv}"`;
  }
  if (storage.type === 'rbd')
    return `rbd rm '${name}' error: rbd: delete error: (2) No such file or directory`;
  if (storage.type === 'zfspool') {
    return `zfs error: cannot open '${String(storage.extra.pool)}/${name}': dataset does not exist`;
  }
  return `proxmox-backup-client failed: Error: backup snapshot "${volname.replace(/^backup\//, '')}" does not exist`;
}

/** Ends the task now if it would within `delay` seconds (the API call waits that long). */
function waitFor(task: Task | undefined, now: number, delaySeconds: number): boolean {
  if (!task || task.startsAt > now || task.endsAt > now + delaySeconds * 1000) return false;
  if (!task.begun) {
    task.begun = true;
    task.begin();
  }
  task.finished = true;
  task.finish();
  return true;
}

function deleteVolume(ctx: HandlerContext): unknown {
  const node = requestNode(ctx);
  const { volid, storeid } = realVolumeId(ctx);
  const { storage, volname, vtype, owner } = parseVolname(ctx.state, volid);
  if (vtype === 'backup' && owner !== undefined) {
    check(ctx.identity, `/storage/${storeid}`, ['Datastore.AllocateSpace']);
    check(ctx.identity, `/vms/${owner}`, ['VM.Backup']);
  } else {
    check(ctx.identity, `/storage/${storeid}`, ['Datastore.Allocate']);
  }
  const upid = spawnTask(ctx.state, {
    node,
    type: 'imgdel',
    id: `${owner !== undefined ? `${owner}@` : ''}${storeid}`,
    user: ctx.identity.tokenId,
    now: ctx.now,
    durationMs: ctx.taskDurationMs,
    work: () => ({
      commit: (log) => {
        const volume = findVolume(ctx.state, node.name, volid);
        const error = freeError(ctx, storage, volname, volume);
        if (error) throw new WorkerDie(error);
        if (!volume) log.info(`disk image '${volumePath(storage, volname)}' does not exist`);
        removeVolume(ctx.state, node.name, volid);
        if (volume) log.info(...freeLines(storage, volid));
        log.info(`Removed volume '${volid}'`);
      },
    }),
  });
  const delay = ctx.params.delay === undefined ? undefined : Number(ctx.params.delay);
  if (delay !== undefined) {
    const task = ctx.state.tasks.get(upid);
    if (waitFor(task, ctx.now, delay)) {
      const status = task?.exitStatus ?? '';
      if (status !== 'OK' && !/^WARNINGS: \d+$/.test(status)) throw dieError(status);
      return null;
    }
  }
  return upid;
}

const VOLUME_PARAMS = {
  node: NODE_PARAM,
  storage: { type: 'string', optional: true, format: 'pve-storage-id' },
  volume: { type: 'string' },
} as const;

export const STORAGE_VOLUME_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/storage/{storage}/content/{volume}',
    permissions: ALL_USERS,
    schema: VOLUME_PARAMS,
    handle: volumeInfo,
  },
  {
    method: 'DELETE',
    path: '/nodes/{node}/storage/{storage}/content/{volume}',
    permissions: ALL_USERS,
    schema: {
      ...VOLUME_PARAMS,
      delay: { type: 'integer', optional: true, minimum: 1, maximum: 30 },
    },
    handle: deleteVolume,
  },
];
