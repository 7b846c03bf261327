// Storages and their volumes (pve-storage API2/Storage/Config.pm index, Status.pm index and
// Content.pm index): each storage or volume is listed only if the caller may see it.
import { ALL_USERS, checkAny, perm } from '../access/permissions.ts';
import { hasPrivilege, type Identity } from '../access/tokens.ts';
import type { ClusterState, StorageDef, Volume } from '../cluster/cluster-state.ts';
import { listVolumes, storageConfig } from '../cluster/volumes.ts';
import { paramError } from '../schema/pve-error.ts';
import { NODE_PARAM, VMID_PARAM, type HandlerContext, type Route } from './handler-context.ts';
import { requestNode, str } from './guest-helpers.ts';
import { storageUsage } from './views.ts';

const canSee = (identity: Identity, storeid: string) =>
  checkAny(identity, `/storage/${storeid}`, ['Datastore.Audit', 'Datastore.AllocateSpace'], true);

function storageIndex({ state, identity, params }: HandlerContext): unknown {
  return state.storages
    .filter((storage) => canSee(identity, storage.id))
    .filter((storage) => params.type === undefined || storage.type === params.type)
    .map((storage) => ({
      storage: storage.id,
      type: storage.type,
      content: storage.content.join(','),
      ...(storage.path !== undefined ? { path: storage.path } : {}),
      ...storage.extra,
      // parse_config marks every type in @SHARED_STORAGE (rbd, pbs, …) shared, like `shared 1`
      ...(storage.shared ? { shared: 1 } : {}),
      digest: 'b3d5c2a4e4f1a7c9d0e6f8a1b2c3d4e5f6a7b8c9',
    }));
}

function nodeStorages(ctx: HandlerContext): unknown {
  const { state, identity } = ctx;
  const node = requestNode(ctx);
  const wanted = (str(ctx, 'content') ?? '').split(/[,;\s]+/).filter(Boolean);
  const only = str(ctx, 'storage');
  if (only !== undefined && !state.storages.some((s) => s.id === only)) {
    throw paramError({ storage: 'No such storage.' });
  }
  const target = str(ctx, 'target');
  return (
    state.storages
      .filter((storage) => wanted.every((content) => storage.content.includes(content)))
      .filter((storage) => canSee(identity, storage.id))
      .filter((storage) => only === undefined || storage.id === only)
      // the clone dialog's filter: storages reachable from here and from the target node
      .filter((storage) => target === undefined || target === node.name || storage.shared)
      .map((storage) => {
        const { total, used } = storageUsage(storage, node);
        return {
          storage: storage.id,
          type: storage.type,
          content: storage.content.join(','),
          shared: storage.shared ? 1 : 0,
          active: 1,
          enabled: 1,
          total,
          used,
          avail: total - used,
          used_fraction: used / total,
        };
      })
  );
}

/** check_volume_access without die: what the content listing keeps for this caller. */
function mayAccess(identity: Identity, volume: Volume): boolean {
  const path = `/storage/${volume.storage}`;
  if (hasPrivilege(identity, path, 'Datastore.Allocate')) return true;
  if (['iso', 'vztmpl', 'import'].includes(volume.vtype)) return canSee(identity, volume.storage);
  if (volume.owner === undefined) return false;
  const vm = `/vms/${volume.owner}`;
  if (volume.vtype === 'backup') {
    return (
      hasPrivilege(identity, path, 'Datastore.AllocateSpace') &&
      hasPrivilege(identity, vm, 'VM.Backup')
    );
  }
  return (
    hasPrivilege(identity, path, 'Datastore.Audit') && hasPrivilege(identity, vm, 'VM.Config.Disk')
  );
}

/** list_volumes' content type of a volume: container images count as rootdir. */
function contentOf(state: ClusterState, volume: Volume): string {
  if (volume.vtype !== 'images') return volume.vtype;
  return state.guests.get(volume.owner ?? 0)?.type === 'lxc' ? 'rootdir' : 'images';
}

function storageContent(ctx: HandlerContext): unknown {
  const { state, identity } = ctx;
  const node = requestNode(ctx);
  const storage = storageConfig(state, String(ctx.params.storage));
  const content = str(ctx, 'content');
  const vmid = ctx.params.vmid === undefined ? undefined : Number(ctx.params.vmid);
  const types =
    content === undefined
      ? ['rootdir', 'images', 'vztmpl', 'iso', 'backup', 'snippets', 'import']
      : [content];
  // images serve both 'images' and 'rootdir'; the storage must have the content type enabled
  const enabled = types.filter((type) => storage.content.includes(type));
  return listVolumes(state, storage, node.name)
    .filter((volume) => enabled.includes(contentOf(state, volume)))
    .filter(
      (volume) =>
        vmid === undefined ||
        volume.owner === vmid ||
        ['import', 'snippets'].includes(volume.vtype),
    )
    .filter((volume) => mayAccess(identity, volume))
    .map((volume) => contentItem(state, storage, volume));
}

/** zfs_list_zvol's extra keys: the dataset name and its origin (null unless a linked clone). */
function zfsKeys(volume: Volume): Record<string, unknown> {
  const base = volume.parent?.slice(volume.parent.indexOf(':') + 1);
  return {
    name: volume.volname.split('/').pop(),
    parent: base === undefined ? null : `${base}@__base__`,
  };
}

/** One item of volume_list, as the storage's plugin fills it. */
function contentItem(state: ClusterState, storage: StorageDef, volume: Volume): unknown {
  return {
    volid: `${volume.storage}:${volume.volname}`,
    content: contentOf(state, volume),
    format: volume.format,
    size: volume.size,
    // `zfs list` has no creation time, so ZFSPoolPlugin's list_images reports none
    ...(storage.type === 'zfspool' ? zfsKeys(volume) : { ctime: volume.ctime }),
    ...(volume.owner !== undefined ? { vmid: volume.owner } : {}),
    ...(volume.subtype !== undefined ? { subtype: volume.subtype } : {}),
    ...(volume.notes !== undefined ? { notes: volume.notes } : {}),
    ...(volume.protected ? { protected: 1 } : {}),
    ...(volume.verification !== undefined ? { verification: { ...volume.verification } } : {}),
  };
}

const STORAGE_TYPES = [
  'btrfs',
  'cephfs',
  'cifs',
  'dir',
  'esxi',
  'iscsi',
  'iscsidirect',
  'lvm',
  'lvmthin',
  'nfs',
  'pbs',
  'rbd',
  'zfs',
  'zfspool',
];

export const STORAGE_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/storage',
    permissions: ALL_USERS,
    schema: { type: { type: 'string', optional: true, enum: STORAGE_TYPES } },
    handle: storageIndex,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/storage',
    permissions: ALL_USERS,
    schema: {
      node: NODE_PARAM,
      content: { type: 'string', optional: true, format: 'pve-storage-content-list' },
      enabled: { type: 'boolean', optional: true },
      format: { type: 'boolean', optional: true },
      storage: { type: 'string', optional: true, format: 'pve-storage-id' },
      target: { type: 'string', optional: true, format: 'pve-node' },
    },
    handle: nodeStorages,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/storage/{storage}/content',
    permissions: perm('/storage/{storage}', ['Datastore.Audit', 'Datastore.AllocateSpace'], true),
    schema: {
      node: NODE_PARAM,
      storage: { type: 'string', format: 'pve-storage-id' },
      content: { type: 'string', optional: true, format: 'pve-storage-content' },
      vmid: { ...VMID_PARAM, optional: true },
    },
    handle: storageContent,
  },
];
