// POST /nodes/{node}/qemu/{vmid}/clone (qemu-server clone_vm): the checks of load_and_check run
// at once (500/400) and again in the qmclone worker, which creates the new VM locked 'clone',
// copies or links every disk, gives every NIC a new MAC and the VM a new smbios1 uuid/vmgenid,
// then unlocks it, moves it to `target` and adds it to `pool`. Linked clones need a template (or
// a snapshot) on a storage that can clone, as PVE's volume_has_feature says.
import { check, perm } from '../access/permissions.ts';
import {
  findNode,
  type Guest,
  type GuestConfig,
  type NodeState,
  blankGuest,
} from '../cluster/cluster-state.ts';
import {
  agentEnabled,
  isCdrom,
  isQemuDriveKey,
  isTemplateConfig,
  parseProps,
  randomUuid,
} from '../cluster/guest-config.ts';
import type { WorkPlan } from '../cluster/tasks.ts';
import { parseVolname, parseVolumeId, storageConfig } from '../cluster/volumes.ts';
import { dieError, paramError, permError } from '../schema/pve-error.ts';
import { cloneDisks } from './clone-disks.ts';
import {
  checkQuorum,
  flag,
  lockError,
  onGuest,
  requestNode,
  startGuestTask,
  str,
} from './guest-helpers.ts';
import {
  GUEST_PARAMS,
  SNAPNAME_PARAM,
  VMID_PARAM,
  type HandlerContext,
  type Route,
  optional,
} from './handler-context.ts';
import { printNet } from './net-config.ts';

export interface ClonePlan {
  readonly source: GuestConfig;
  readonly full: boolean;
  readonly target: NodeState | undefined;
  readonly storage: string | undefined;
  readonly format: string | undefined;
  readonly snapname: string | undefined;
}

/** load_and_check: everything clone_vm verifies before (and after) forking. */
function loadAndCheck(ctx: HandlerContext, guest: Guest): ClonePlan {
  const local = requestNode(ctx);
  const pool = str(ctx, 'pool');
  if (pool !== undefined && !ctx.state.pools.has(pool))
    throw permError(`pool '${pool}' does not exist`);
  const targetName = str(ctx, 'target');
  const target =
    targetName === undefined || targetName === local.name || targetName === 'localhost'
      ? undefined
      : findNode(ctx.state, targetName);
  if (
    targetName !== undefined &&
    target === undefined &&
    targetName !== local.name &&
    targetName !== 'localhost'
  ) {
    throw dieError(`no such cluster node '${targetName}'`);
  }
  const storeid = str(ctx, 'storage');
  if (storeid !== undefined) {
    const storage = storageConfig(ctx.state, storeid);
    if (!storage.content.includes('images'))
      throw paramError({ storage: `storage '${storeid}' does not support vm images` });
    if (target && !storage.shared) throw dieError(`can't clone to non-shared storage '${storeid}'`);
  }
  checkQuorum(ctx);
  const locked = lockError(guest);
  if (locked) throw dieError(locked);
  const snapname = str(ctx, 'snapname');
  if (snapname && !guest.snapshots.has(snapname))
    throw dieError(`snapshot '${snapname}' does not exist`);
  const full = ctx.params.full === undefined ? !isTemplateConfig(guest.config) : flag(ctx, 'full');
  if (storeid !== undefined && !full)
    throw dieError("parameter 'storage' not allowed for linked clones");
  if (str(ctx, 'format') !== undefined && !full)
    throw dieError("parameter 'format' not allowed for linked clones");
  const source = { ...(snapname ? guest.snapshots.get(snapname) : guest.config) };
  let shared = true;
  for (const key of Object.keys(source).sort()) {
    const value = source[key] ?? '';
    if (!isQemuDriveKey(key) || isCdrom(value)) continue;
    const volid = parseProps(value, 'file').file ?? '';
    const dest = storageConfig(ctx.state, storeid ?? parseVolumeId(volid)?.storeid ?? '');
    check(ctx.identity, `/storage/${dest.id}`, ['Datastore.AllocateSpace']);
    if (!dest.shared) shared = false;
    // volume_has_feature('clone'): thin storages link to a base image or a snapshot only
    const copied = full || /cloudinit/.test(volid) || key === 'tpmstate0';
    if (!copied && !snapname && !parseVolname(ctx.state, volid).isBase) {
      throw dieError(`Linked clone feature is not supported for '${volid}' (${key})`);
    }
  }
  if (target && !shared)
    throw dieError(`can't clone VM to node '${target.name}' (VM uses local storage)`);
  const newid = Number(ctx.params.newid);
  const existing = ctx.state.guests.get(newid);
  if (existing && existing.node === local.name)
    throw dieError(`unable to create VM ${newid}: config file already exists`);
  return { source, full, target, storage: storeid, format: str(ctx, 'format'), snapname };
}

/** The new VM's config before its disks are added (no snapshot info, no unused disks). */
function baseConfig(ctx: HandlerContext, guest: Guest, plan: ClonePlan): GuestConfig {
  const config: GuestConfig = { lock: 'clone' };
  for (const [key, value] of Object.entries(plan.source)) {
    if (
      /^(snapshots|parent|snaptime|vmstate|snapstate|runningcpu|runningmachine|running-nets-host-mtu|description|unused\d+)$/.test(
        key,
      )
    )
      continue;
    if (isQemuDriveKey(key) && !isCdrom(value)) continue; // written as each disk is cloned
    config[key] = /^net\d+$/.test(key) ? printNet(value, true) : value;
  }
  const smbios = parseProps(config.smbios1 ?? '');
  config.smbios1 = Object.entries({ ...smbios, uuid: randomUuid() })
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  if (config.vmgenid) config.vmgenid = randomUuid();
  delete config.template;
  config.name = str(ctx, 'name') ?? `Copy-of-VM-${plan.source.name ?? guest.vmid}`;
  const description = str(ctx, 'description');
  if (description) config.description = description;
  return config;
}

function clone(ctx: HandlerContext): unknown {
  const vmid = Number(ctx.params.vmid);
  const node = String(ctx.params.node);
  const guest = ctx.state.guests.get(vmid);
  if (guest?.type !== 'qemu' || guest.node !== node) {
    throw dieError(`unable to find configuration file for VM ${vmid} on node '${node}'`);
  }
  loadAndCheck(ctx, guest);
  const newid = Number(ctx.params.newid);
  return startGuestTask(
    ctx,
    'qmclone',
    vmid,
    onGuest(ctx, 'qemu', vmid, (source, log): WorkPlan => {
      const plan = loadAndCheck(ctx, source);
      if (plan.full && source.status === 'running' && !plan.snapname && plan.source.tpmstate0) {
        return { error: 'cannot clone TPM state while VM is running' };
      }
      if (ctx.state.guests.has(newid)) {
        return {
          error: `close (rename) atomic file '/etc/pve/nodes/${node}/qemu-server/${newid}.conf' failed: File exists`,
        };
      }
      log.info(`creating a clone of VM ${vmid} with ID ${newid}`);
      const copy: Guest = blankGuest(newid, 'qemu', node, baseConfig(ctx, source, plan));
      if (Object.keys(source.pending).length > 0) {
        log.warn(
          `found pending changes for '${Object.keys(source.pending).join(',')}', discarding for clone`,
        );
      }
      ctx.state.guests.set(newid, copy);
      const created: string[] = [];
      return {
        commit: (taskLog, now) => {
          Object.assign(copy.config, cloneDisks(ctx, source, copy, plan, taskLog, created, now));
          delete copy.config.lock;
          copy.agentRunning = agentEnabled(copy.config);
          if (plan.target) copy.node = plan.target.name;
          const pool = str(ctx, 'pool');
          if (pool !== undefined) copy.pool = pool;
        },
        undo: () => {
          ctx.state.guests.delete(newid);
          for (const volid of created)
            ctx.state.volumes = ctx.state.volumes.filter(
              (v) => `${v.storage}:${v.volname}` !== volid,
            );
        },
      };
    }),
  );
}

export const CLONE_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/clone',
    permissions: {
      kind: 'and',
      checks: [
        perm('/vms/{vmid}', ['VM.Clone']),
        {
          kind: 'or',
          checks: [
            perm('/vms/{newid}', ['VM.Allocate']),
            { kind: 'perm', path: '/pool/{pool}', privs: ['VM.Allocate'], requireParam: 'pool' },
          ],
        },
      ],
    },
    schema: {
      ...GUEST_PARAMS,
      newid: VMID_PARAM,
      name: optional({ type: 'string', format: 'dns-name' }),
      description: optional({ type: 'string' }),
      pool: optional({ type: 'string', format: 'pve-poolid' }),
      snapname: optional(SNAPNAME_PARAM),
      storage: optional({ type: 'string', format: 'pve-storage-id' }),
      format: optional({ type: 'string', enum: ['raw', 'qcow2', 'vmdk'] }),
      full: optional({ type: 'boolean' }),
      target: optional({ type: 'string', format: 'pve-node' }),
      bwlimit: optional({ type: 'integer', minimum: 0 }),
    },
    handle: clone,
  },
];
