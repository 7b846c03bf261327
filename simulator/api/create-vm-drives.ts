// The drive checks of qemu-server create_vm that run before the task is forked:
// $check_storage_access (storages exist, may hold images, caller may use them) and then
// $check_drive_param (import-from syntax, ISOs need media=cdrom). Returns what the task creates.
import { dieError, paramError, permError } from '../schema/pve-error.ts';
import type { ClusterState, StorageDef } from '../cluster/cluster-state.ts';
import { isValidDriveName } from '../schema/formats.ts';
import { driveFormatOf } from '../schema/qemu-drive-formats.ts';
import { parsePropertyString } from '../schema/schema-check.ts';
import { hasPrivilege, type Identity } from '../access/tokens.ts';
import { NEW_DISK_RE, parseVolname, parseVolumeId, storageConfig } from '../cluster/volumes.ts';

export interface DrivePlan {
  readonly key: string;
  readonly drive: Readonly<Record<string, string>>;
  /** new: allocate SIZE GiB on `storage`; existing: attach `volid` (checked in the task). */
  readonly kind: 'new' | 'existing' | 'cloudinit' | 'none';
  readonly storage?: StorageDef;
  readonly sizeGiB?: number;
}

function requirePriv(identity: Identity, path: string, privilege: string): void {
  if (!hasPrivilege(identity, path, privilege)) throw permError(`${path}, ${privilege}`);
}

/** PVE::Storage::check_volume_access for a volume given by the caller. */
function checkVolumeAccess(state: ClusterState, identity: Identity, volid: string): void {
  const parsed = parseVolumeId(volid);
  if (!parsed) {
    // The token user is never root@pam itself, so paths are refused (Perl appends the location).
    throw dieError(
      'Only root can pass arbitrary filesystem paths. at /usr/share/perl5/PVE/Storage.pm line 652.',
    );
  }
  const volume = parseVolname(state, volid);
  const path = `/storage/${parsed.storeid}`;
  if (hasPrivilege(identity, path, 'Datastore.Allocate')) return;
  if (['iso', 'vztmpl', 'import'].includes(volume.vtype)) {
    const canRead =
      hasPrivilege(identity, path, 'Datastore.AllocateSpace') ||
      hasPrivilege(identity, path, 'Datastore.Audit');
    if (!canRead) {
      throw permError(`${path}, Datastore.AllocateSpace|Datastore.Audit`);
    }
    return;
  }
  throw dieError(`missing privileges to access ${volid}`);
}

function planDrive(
  state: ClusterState,
  identity: Identity,
  key: string,
  drive: Record<string, string>,
  defaultStorage: string | undefined,
): DrivePlan {
  const volid = drive.file ?? '';
  const isCdrom = drive.media === 'cdrom';
  const parsed = parseVolumeId(volid);
  if (
    volid === '' ||
    volid === 'none' ||
    volid === 'cloudinit' ||
    parsed?.volname === 'cloudinit'
  ) {
    const storeid = parsed?.storeid ?? defaultStorage;
    if (volid === 'none' || volid === '' || storeid === undefined)
      return { key, drive, kind: 'none' };
    return { key, drive, kind: 'cloudinit', storage: storageConfig(state, storeid) };
  }
  if (isCdrom && volid === 'cdrom') {
    requirePriv(identity, '/', 'Sys.Console');
    return { key, drive, kind: 'none' };
  }
  const newDisk = NEW_DISK_RE.exec(volid);
  if (!isCdrom && newDisk) {
    const storeid = newDisk[2] || defaultStorage;
    if (!storeid) throw dieError('no storage ID specified (and no default storage)');
    requirePriv(identity, `/storage/${storeid}`, 'Datastore.AllocateSpace');
    const storage = storageConfig(state, storeid);
    if (!storage.content.includes('images')) {
      throw paramError({ storage: `storage '${storeid}' does not support vm images` });
    }
    return { key, drive, kind: 'new', storage, sizeGiB: Number(newDisk[3]) };
  }
  checkVolumeAccess(state, identity, volid);
  if (parsed) {
    const { vtype } = parseVolname(state, volid);
    if (vtype !== 'images' && vtype !== 'iso') {
      throw paramError({ [key]: "content type needs to be 'images' or 'iso'" });
    }
  }
  return { key, drive, kind: 'existing' };
}

/** Options an import into these special drives must spell out. */
const IMPORT_REQUIRES: Readonly<Record<string, readonly string[]>> = {
  efidisk0: ['efitype', 'pre-enrolled-keys'],
  tpmstate0: ['version'],
};

/** $check_drive_param: import-from needs STORAGE:0; an ISO needs an explicit media=cdrom. */
function checkDriveParam(state: ClusterState, plan: DrivePlan): void {
  const { key, drive } = plan;
  const volid = drive.file ?? '';
  if (drive['import-from'] !== undefined) {
    const match = NEW_DISK_RE.exec(volid);
    if (!match || Number(match[3]) !== 0) {
      const hint = 'use <storage ID>:0,import-from=<source>';
      throw paramError({ [key]: `'import-from' requires special syntax - ${hint}` });
    }
    for (const option of IMPORT_REQUIRES[key] ?? []) {
      if (drive[option] === undefined) {
        throw paramError({ [key]: `need to specify '${option}' when using 'import-from'` });
      }
    }
  }
  const parsed = parseVolumeId(volid);
  if (parsed && !NEW_DISK_RE.test(volid) && parsed.volname !== 'cloudinit') {
    if (parseVolname(state, volid).vtype === 'iso' && drive.media !== 'cdrom') {
      throw paramError({ [key]: "explicit 'media=cdrom' is required for iso images" });
    }
  }
}

/** Run both passes over every drive parameter, in PVE's (sorted) order. */
export function checkDrives(
  state: ClusterState,
  identity: Identity,
  params: Record<string, string>,
  defaultStorage: string | undefined,
): DrivePlan[] {
  const plans: DrivePlan[] = [];
  for (const key of Object.keys(params).sort()) {
    const format = driveFormatOf(key);
    if (!isValidDriveName(key) || !format) continue;
    const drive = parsePropertyString(format, params[key] ?? '', key);
    plans.push(planDrive(state, identity, key, drive, defaultStorage));
    if (drive['import-from'] !== undefined) {
      const source = drive['import-from'];
      if (parseVolumeId(source)) {
        const { vtype } = parseVolname(state, source);
        if (vtype !== 'images' && vtype !== 'import') {
          const message = `${source} has wrong type '${vtype}' - needs to be 'images' or 'import'`;
          throw paramError({ [key]: message });
        }
      } else {
        checkVolumeAccess(state, identity, source);
      }
    }
  }
  for (const plan of plans) checkDriveParam(state, plan);
  return plans;
}
