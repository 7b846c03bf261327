// Every tool the server offers, in the order tools/list shows them (reads first, then writes),
// and their arguments and argument fields (what policy paths such as args.net0.bridge may refer to).

import type { ToolSpec } from '../calls/tool-spec';
import type { ToolCatalog } from '../policy/load';
import { apiRequest } from './api-request';
import { createBackup, deleteBackup, restoreBackup } from './backups';
import { getClusterStatus, getNodeMetrics, getVersion, listNodes } from './read/cluster';
import { cloneVm } from './provisioning/clone-vm';
import { createLxc } from './provisioning/create-lxc';
import { createQemuVm } from './provisioning/create-qemu-vm';
import { deleteVm } from './provisioning/delete-vm';
import { migrateVm } from './provisioning/migrate-vm';
import { resizeDisk } from './provisioning/resize-disk';
import { setVmConfig } from './provisioning/set-vm-config';
import { listVms } from './read/list-vms';
import { POWER_TOOLS } from './power';
import { listResources } from './read/resources';
import { createSnapshot, deleteSnapshot, listSnapshots, rollbackSnapshot } from './snapshots';
import { listBackups, listStorage, listStorageContent } from './read/storage';
import { getTaskStatus } from './read/task-status';
import { getVmConfig } from './read/vm-config';
import { getVmStatus } from './read/vm-status';
import { guestExec, guestFileRead, guestInfo } from './guest-agent';

export const TOOLS: readonly ToolSpec[] = [
  getVersion,
  getClusterStatus,
  listNodes,
  getNodeMetrics,
  listResources,
  listVms,
  getVmStatus,
  getVmConfig,
  listStorage,
  listBackups,
  listStorageContent,
  getTaskStatus,
  listSnapshots,
  guestInfo,
  guestFileRead,
  ...POWER_TOOLS,
  createSnapshot,
  deleteSnapshot,
  rollbackSnapshot,
  createQemuVm,
  cloneVm,
  createLxc,
  deleteVm,
  resizeDisk,
  setVmConfig,
  migrateVm,
  guestExec,
  createBackup,
  restoreBackup,
  deleteBackup,
  apiRequest,
];

export const TOOL_CATALOG: ToolCatalog = Object.fromEntries(
  TOOLS.map((t) => [
    t.name,
    {
      // What a tool reports as inherited from a source first, so an argument's own fields win.
      ...t.inherits,
      ...Object.fromEntries(
        Object.keys(t.input.shape).map((arg) => [arg, t.policyFields?.[arg] ?? null]),
      ),
      // Which cluster the call is for: an argument where there are several, always in the
      // policy's view (the default filled in), so one rule reads the same on one or several.
      cluster: null,
    },
  ]),
);
