// PUT /nodes/{node}/lxc/{vmid}/config (synchronous), following pve-container API2/LXC/Config.pm
// and update_pct_config: lock and digest checks, delete/revert checks, then changes go to
// [PENDING] and are applied at once for a stopped container or hotplugged for a running one.
import { perm } from '../access/permissions.ts';
import type { Guest } from '../cluster/cluster-state.ts';
import { configDigest } from '../cluster/config-file.ts';
import { formatSize, printProps } from '../cluster/guest-config.ts';
import { applyStaged, revertPending, stageDelete, stageValue } from '../cluster/pending.ts';
import { allocLines } from '../cluster/storage-log.ts';
import { TaskLog } from '../cluster/tasks.ts';
import {
  allocateImage,
  NEW_DISK_RE,
  parseVolumeId,
  removeVolume,
  storageConfig,
} from '../cluster/volumes.ts';
import { splitList } from '../schema/formats.ts';
import { LXC_UPDATE_SCHEMA, lxcOptionType } from '../schema/lxc-schema.ts';
import { MOUNTPOINT_FORMAT, ROOTFS_FORMAT } from '../schema/lxc-formats.ts';
import { dieError, paramError } from '../schema/pve-error.ts';
import { parsePropertyString } from '../schema/schema-check.ts';
import { uniqueTags } from './create-vm-task.ts';
import {
  asStrings,
  checkLock,
  checkProtection,
  extract,
  loadGuest,
  requestNode,
} from './guest-helpers.ts';
import type { HandlerContext, Route } from './handler-context.ts';
import { printLxcNet } from './net-config.ts';

const GIB = 1024 ** 3;

/** A mount point value: STORAGE:SIZE allocates a new volume (create_disks), else kept as given. */
export function mountValue(
  ctx: HandlerContext,
  guest: Pick<Guest, 'vmid' | 'node'>,
  key: string,
  value: string,
  log: TaskLog,
): string {
  const mp = parsePropertyString(key === 'rootfs' ? ROOTFS_FORMAT : MOUNTPOINT_FORMAT, value, key);
  const volume = mp.volume ?? '';
  const storeid = parseVolumeId(volume)?.storeid;
  if (storeid !== undefined) {
    const storage = storageConfig(ctx.state, storeid);
    if (!storage.content.includes('rootdir')) {
      throw dieError(`storage '${storeid}' does not allow content type 'rootdir' (Container)`);
    }
  }
  const fresh = NEW_DISK_RE.exec(volume);
  if (!fresh || storeid === undefined) return value;
  const size = Math.round(Number(fresh[3]) * GIB);
  const storage = storageConfig(ctx.state, storeid);
  // alloc_disk: a ZFS pool gives containers a dataset (subvol), other storages a raw image
  const volid = allocateImage(ctx.state, {
    storage,
    node: guest.node,
    vmid: guest.vmid,
    size,
    now: ctx.now,
    format: storage.type === 'zfspool' ? 'subvol' : 'raw',
  });
  log.info(...allocLines(storage, volid, size));
  return printProps(
    { ...mp, volume: volid, size: formatSize(size) },
    { defaultKey: 'volume', required: key === 'rootfs' ? [] : ['mp'] },
  );
}

function update(ctx: HandlerContext): unknown {
  const params = asStrings(ctx.params);
  for (const key of ['node', 'vmid']) extract(params, key);
  const digest = extract(params, 'digest');
  if (Object.keys(params).length === 0) throw dieError('no options specified');
  const deletes = splitList(extract(params, 'delete') ?? '');
  const reverts = splitList(extract(params, 'revert') ?? '');
  const guest = loadGuest(ctx, 'lxc');
  checkLock(guest);
  if (digest && digest !== configDigest(guest)) {
    throw dieError('detected modified configuration - file changed by other user? Try again.');
  }
  for (const key of reverts) {
    if (lxcOptionType(key) === undefined) throw paramError({ revert: `unknown option '${key}'` });
    if (params[key] !== undefined)
      throw paramError({ revert: `you can't use '-${key}' and '-revert ${key}' at the same time` });
  }
  for (const key of deletes) {
    if (lxcOptionType(key) === undefined) throw paramError({ delete: `unknown option '${key}'` });
    if (params[key] !== undefined)
      throw paramError({ delete: `you can't use '-${key}' and -delete ${key}' at the same time` });
    if (reverts.includes(key))
      throw paramError({
        delete: `you can't use '-delete ${key}' and '-revert ${key}' at the same time`,
      });
  }
  const log = new TaskLog();
  for (const key of reverts) revertPending(guest, key);
  for (const key of deletes) {
    if (guest.config[key] === undefined && guest.pending[key] === undefined) {
      log.warn(`cannot delete '${key}' - not set in current configuration!`);
      continue;
    }
    if (['memory', 'rootfs', 'ostype'].includes(key))
      throw dieError(`unable to delete required option '${key}'`);
    if (/^(unused|mp)\d+$/.test(key))
      checkProtection(guest, `can't remove CT ${guest.vmid} drive '${key}'`);
    if (key === 'unprivileged') throw dieError(`unable to delete read-only option: '${key}'`);
    stageDelete(guest, key);
  }
  for (const key of Object.keys(params).sort()) {
    let value = params[key] ?? '';
    if (key === 'rootfs' || /^mp\d+$/.test(key)) {
      checkProtection(guest, `can't update CT ${guest.vmid} drive '${key}'`);
      value = mountValue(ctx, guest, key, value, log);
    } else if (key === 'unprivileged') {
      throw dieError(`unable to modify read-only option: '${key}'`);
    } else if (key === 'tags') {
      value = uniqueTags(value);
    } else if (/^net\d+$/.test(key)) {
      value = printLxcNet(value);
    }
    stageValue(guest, key, value);
  }
  requestNode(ctx);
  applyStaged(guest, (volid) => removeVolume(ctx.state, guest.node, volid));
  return null;
}

export const LXC_CONFIG_UPDATE_ROUTES: readonly Route[] = [
  {
    method: 'PUT',
    path: '/nodes/{node}/lxc/{vmid}/config',
    permissions: perm(
      '/vms/{vmid}',
      [
        'VM.Config.Disk',
        'VM.Config.CPU',
        'VM.Config.Memory',
        'VM.Config.Network',
        'VM.Config.Options',
      ],
      true,
    ),
    schema: LXC_UPDATE_SCHEMA,
    handle: update,
  },
];
