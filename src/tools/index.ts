// Every tool the server offers, in the order tools/list shows them (reads first, then writes),
// and their arguments and argument fields (what policy paths such as args.net0.bridge may refer to).

import type { z } from 'zod';
import type { ToolSpec } from '../calls/tool-spec';
import type { ToolCatalog } from '../policy/load';
import { apiRequest } from './api-request';
import { getClusterStatus, getNodeMetrics, getVersion, listNodes } from './cluster';
import { cloneVm } from './clone-vm';
import { createLxc } from './create-lxc';
import { createQemuVm } from './create-qemu-vm';
import { deleteVm } from './delete-vm';
import { migrateVm } from './migrate-vm';
import { resizeDisk } from './resize-disk';
import { setVmConfig } from './set-vm-config';
import { listVms } from './list-vms';
import { POWER_TOOLS } from './power';
import { listResources } from './resources';
import { createSnapshot, deleteSnapshot, listSnapshots, rollbackSnapshot } from './snapshots';
import { listBackups, listStorage, listStorageContent } from './storage';
import { getTaskStatus } from './task-status';
import { getVmConfig } from './vm-config';
import { getVmStatus } from './vm-status';

const asSpec = (tool: unknown): ToolSpec => tool as ToolSpec;

export const TOOLS: readonly ToolSpec[] = [
  asSpec(getVersion),
  asSpec(getClusterStatus),
  asSpec(listNodes),
  asSpec(getNodeMetrics),
  asSpec(listResources),
  asSpec(listVms),
  asSpec(getVmStatus),
  asSpec(getVmConfig),
  asSpec(listStorage),
  asSpec(listBackups),
  asSpec(listStorageContent),
  asSpec(getTaskStatus),
  asSpec(listSnapshots),
  ...POWER_TOOLS,
  createSnapshot,
  deleteSnapshot,
  rollbackSnapshot,
  createQemuVm,
  asSpec(cloneVm),
  createLxc,
  deleteVm,
  resizeDisk,
  setVmConfig,
  migrateVm,
  asSpec(apiRequest),
];

export const TOOL_CATALOG: ToolCatalog = Object.fromEntries(
  TOOLS.map((t) => [
    t.name,
    {
      // What a tool reports as inherited from a source first, so an argument's own fields win.
      ...t.inherits,
      ...Object.fromEntries(
        Object.keys((t.input as unknown as z.ZodObject).shape).map((arg) => [
          arg,
          t.policyFields?.[arg] ?? null,
        ]),
      ),
    },
  ]),
);
