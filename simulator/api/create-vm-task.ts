// The qmcreate worker: PVE writes a config holding only `lock: create`, forks a task that
// allocates disks (create_disks) and writes the real config (defaults: boot order, smbios1 uuid,
// vmgenid, meta), then drops the lock and adds the VM to its pool and (ha-managed=1) to HA, or
// removes the VM and its new volumes on error.
import { blankGuest } from '../cluster/cluster-state.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { ClusterState, Guest, NodeState } from '../cluster/cluster-state.ts';
import { defaultBootOrder, formatSize, printProps, randomUuid } from '../cluster/guest-config.ts';
import { bootGuest } from '../cluster/power.ts';
import { allocLines, copyLines } from '../cluster/storage-log.ts';
import { spawnTask, WorkerDie, type TaskLog } from '../cluster/tasks.ts';
import { allocateImage, findVolume, removeVolume } from '../cluster/volumes.ts';
import { splitList } from '../schema/formats.ts';
import type { DrivePlan } from './create-vm-drives.ts';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

export interface CreateRequest {
  readonly vmid: number;
  readonly node: NodeState;
  readonly user: string;
  readonly params: Readonly<Record<string, string>>;
  readonly drives: readonly DrivePlan[];
  readonly start: boolean;
  /** ha-managed=1: the worker adds vm:<vmid> to HA (state started when it starts the VM). */
  readonly haManaged?: boolean;
  readonly pool?: string;
  readonly now: number;
  readonly durationMs: number;
  /** A `taskExitStatus` fault overriding the computed outcome. */
  readonly forcedExitStatus?: string;
}

/** PVE::GuestHelpers::get_unique_tags with default tag-style: lower-cased, sorted, unique. */
export function uniqueTags(tags: string): string {
  return [...new Set(splitList(tags).map((tag) => tag.toLowerCase()))].sort().join(';');
}

/** PVE::Tools::encrypt_pw: crypt() with a random SHA-256 ('$5$') salt, unless already crypted. */
export function encryptPassword(password: string): string {
  if (/^\$(?:[156]|2[ay])(\$.+){2}/.test(password)) return password;
  const salt = randomBytes(6).toString('base64').replace(/[+=]/g, '.');
  const hash = createHash('sha256')
    .update(`${salt}${password}`)
    .digest('base64')
    .replace(/[+=]/g, '.')
    .slice(0, 43);
  return `$5$${salt}$${hash}`;
}

export type DiskRequest = Pick<CreateRequest, 'vmid' | 'node' | 'drives' | 'now'> & {
  /** How a missing volume is reported: create_vm says "unable to create VM <id> - ...". */
  readonly errorPrefix?: string;
};

/** create_disks: allocate new volumes, check existing ones; returns the drive values to write. */
export function createDisks(
  state: ClusterState,
  req: DiskRequest,
  log: TaskLog,
  allocated: string[],
): Record<string, string> {
  const written: Record<string, string> = {};
  for (const plan of req.drives) {
    const { file, 'import-from': importFrom, ...options } = plan.drive;
    if ((plan.kind === 'new' || plan.kind === 'cloudinit') && plan.storage) {
      const source =
        importFrom === undefined ? undefined : findVolume(state, req.node.name, importFrom);
      const size =
        plan.kind === 'cloudinit'
          ? 4 * MIB
          : plan.key === 'efidisk0' || plan.key === 'tpmstate0'
            ? 4 * MIB
            : (source?.size ?? Math.round((plan.sizeGiB ?? 0) * GIB));
      const name = plan.kind === 'cloudinit' ? `vm-${req.vmid}-cloudinit` : undefined;
      const volid = allocateImage(state, {
        storage: plan.storage,
        node: req.node.name,
        vmid: req.vmid,
        size,
        now: req.now,
        ...(name ? { name } : {}),
      });
      allocated.push(volid);
      log.info(...allocLines(plan.storage, volid, size));
      if (importFrom !== undefined)
        log.info(`importing disk '${importFrom}' to VM ${req.vmid} ...`, ...copyLines(size));
      const value =
        plan.kind === 'cloudinit'
          ? printProps({ file: volid, media: 'cdrom' }, { defaultKey: 'file' })
          : printProps({ ...options, file: volid, size: formatSize(size) }, { defaultKey: 'file' });
      log.info(`${plan.key}: successfully created disk '${value}'`);
      written[plan.key] = value;
    } else if (plan.kind === 'existing') {
      const volume = findVolume(state, req.node.name, file ?? '');
      if (!volume) throw new WorkerDie(`${req.errorPrefix ?? ''}volume ${file} does not exist`);
      written[plan.key] = printProps(
        { ...options, file: file ?? '', size: formatSize(volume.size) },
        { defaultKey: 'file' },
      );
    } else {
      written[plan.key] = printProps({ ...options, file: file ?? 'none' }, { defaultKey: 'file' });
    }
  }
  return written;
}

/** The config create_vm writes: parameters as given, disks as created, PVE's defaults added. */
function finalConfig(
  req: CreateRequest,
  disks: Record<string, string>,
  now: number,
): Record<string, string> {
  const config: Record<string, string> = { ...req.params, ...disks };
  if (config.tags !== undefined) config.tags = uniqueTags(config.tags);
  if (config.cipassword !== undefined && !/^win/.test(config.ostype ?? ''))
    config.cipassword = encryptPassword(config.cipassword);
  config.boot ??= defaultBootOrder(config);
  config.smbios1 ??= `uuid=${randomUuid()}`;
  if (config.vmgenid === undefined || config.vmgenid === '1') config.vmgenid = randomUuid();
  // Windows guests get their machine version pinned at create (check_and_pin_machine_string)
  if (/^win/.test(config.ostype ?? '') && !/\d/.test(config.machine ?? '')) {
    config.machine = config.machine === 'q35' ? 'pc-q35-10.0+pve1' : 'pc-i440fx-10.0+pve1';
  }
  config.meta = `creation-qemu=10.0.2,ctime=${Math.floor(now / 1000)}`;
  return config;
}

/** Create the locked placeholder guest and the task; returns the UPID. */
export function spawnCreateTask(state: ClusterState, req: CreateRequest): string {
  const guest: Guest = blankGuest(req.vmid, 'qemu', req.node.name);
  state.guests.set(req.vmid, guest);
  const allocated: string[] = [];
  return spawnTask(state, {
    node: req.node,
    type: 'qmcreate',
    id: String(req.vmid),
    user: req.user,
    now: req.now,
    durationMs: req.durationMs,
    vmid: req.vmid,
    ...(req.forcedExitStatus !== undefined ? { forcedExitStatus: req.forcedExitStatus } : {}),
    work: () => ({
      commit: (log, now) => {
        const disks = createDisks(
          state,
          { ...req, errorPrefix: `unable to create VM ${req.vmid} - ` },
          log,
          allocated,
        );
        guest.config = finalConfig(req, disks, now);
        if (req.pool !== undefined) guest.pool = req.pool;
        if (req.haManaged) {
          log.info('Add as HA resource');
          state.haResources.set(`vm:${req.vmid}`, {
            type: 'vm',
            state: req.start ? 'started' : 'stopped',
          });
        }
        if (!req.start) return;
        log.info('Execute autostart');
        // vm_start runs as its own qmstart task; a missing bridge makes that one fail, not this one.
        const bridges = Object.entries(guest.config)
          .filter(([key]) => /^net\d+$/.test(key))
          .map(([, value]) => /(?:^|,)bridge=([^,]+)/.exec(value)?.[1]);
        if (bridges.every((bridge) => bridge === undefined || req.node.bridges.includes(bridge))) {
          bootGuest(state, guest, now);
        }
      },
      undo: () => {
        state.guests.delete(req.vmid);
        for (const volid of allocated) removeVolume(state, req.node.name, volid);
      },
    }),
  });
}
