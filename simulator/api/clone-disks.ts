// The disk part of a qmclone worker (qemu-server clone_disk): each disk of the source (or of the
// snapshot) is copied in full, or linked to the template's base image, onto the chosen storage
// under the new VM's id; cloud-init drives and TPM state are always regenerated or copied.
import type { Guest } from '../cluster/cluster-state.ts';
import {
  formatSize,
  isCdrom,
  isQemuDriveKey,
  parseProps,
  parseSize,
  printProps,
} from '../cluster/guest-config.ts';
import { allocLines, copyLines } from '../cluster/storage-log.ts';
import { WorkerDie, type TaskLog } from '../cluster/tasks.ts';
import {
  allocateImage,
  findVolume,
  parseVolname,
  parseVolumeId,
  storageConfig,
} from '../cluster/volumes.ts';
import type { ClonePlan } from './clone.ts';
import type { HandlerContext } from './handler-context.ts';

export function cloneDisks(
  ctx: HandlerContext,
  source: Guest,
  copy: Guest,
  plan: ClonePlan,
  log: TaskLog,
  created: string[],
  now: number,
): Record<string, string> {
  const written: Record<string, string> = {};
  for (const key of Object.keys(plan.source).filter(isQemuDriveKey).sort()) {
    const value = plan.source[key] ?? '';
    if (isCdrom(value) && !/cloudinit/.test(value)) continue;
    const { file: volid = '', ...options } = parseProps(value, 'file');
    const storage = storageConfig(ctx.state, plan.storage ?? parseVolumeId(volid)?.storeid ?? '');
    const size =
      findVolume(ctx.state, source.node, volid)?.size ?? parseSize(options.size ?? '0') ?? 0;
    if (/cloudinit/.test(volid)) {
      const cloudinit = allocateImage(ctx.state, {
        storage,
        node: copy.node,
        vmid: copy.vmid,
        size,
        now,
        name: `vm-${copy.vmid}-cloudinit`,
      });
      created.push(cloudinit);
      written[key] = printProps({ file: cloudinit, media: 'cdrom' }, { defaultKey: 'file' });
      continue;
    }
    const linked = !plan.full && key !== 'tpmstate0';
    log.info(`create ${linked ? 'linked' : 'full'} clone of drive ${key} (${volid})`);
    // thin LVM and RBD images are raw only (their plugins' alloc_image refuses other formats)
    if (plan.format !== undefined && plan.format !== 'raw' && storage.type !== 'dir') {
      throw new WorkerDie(`clone failed: unsupported format '${plan.format}'`);
    }
    // a linked clone builds on the base image: it is recorded, so the template cannot go first
    const parent = linked && parseVolname(ctx.state, volid).isBase ? { parent: volid } : {};
    const newVolid = allocateImage(ctx.state, {
      storage,
      node: copy.node,
      vmid: copy.vmid,
      size,
      now,
      ...parent,
    });
    created.push(newVolid);
    log.info(...allocLines(storage, newVolid, size));
    if (!linked) log.info(...copyLines(size));
    written[key] = printProps(
      { ...options, file: newVolid, size: formatSize(size) },
      { defaultKey: 'file' },
    );
  }
  return written;
}
