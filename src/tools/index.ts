// Every tool the server offers, in the order tools/list shows them.

import type { ToolSpec } from '../mcp/tool-spec';
import { createQemuVm } from './create-qemu-vm';
import { listVms } from './list-vms';

export const TOOLS: readonly ToolSpec[] = [listVms, createQemuVm] as unknown as readonly ToolSpec[];
