// Every tool the server offers, in the order tools/list shows them, and their arguments and
// argument fields (what policy paths such as args.net0.bridge may refer to).

import type { z } from 'zod';
import type { ToolSpec } from '../mcp/tool-spec';
import type { ToolCatalog } from '../policy/load';
import { createQemuVm } from './create-qemu-vm';
import { listVms } from './list-vms';

export const TOOLS: readonly ToolSpec[] = [listVms, createQemuVm] as unknown as readonly ToolSpec[];

export const TOOL_CATALOG: ToolCatalog = Object.fromEntries(
  TOOLS.map((t) => [
    t.name,
    Object.fromEntries(Object.keys((t.input as unknown as z.ZodObject).shape).map((arg) => [arg, t.policyFields?.[arg] ?? null])),
  ]),
);
