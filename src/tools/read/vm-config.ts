// pve_get_vm_config: a guest's configuration, each property string (disks, NICs, cloud-init IP
// settings...) also split into its fields, secrets shown as redacted; or the configuration as a
// snapshot holds it. The digest is what a later config change passes for optimistic concurrency.

import { z } from 'zod';
import { defineReadTool } from '../../calls/tool-spec';
import { viewConfig } from '../../proxmox/config-view';
import { guestConfig } from '../../proxmox/schemas';
import { guestTarget, snapshotName } from '../common';
import { outputExtras } from '../../calls/result';
import { guestLabel, guestPath } from '../../proxmox/guest-state';

export const getVmConfig = defineReadTool({
  name: 'pve_get_vm_config',
  title: 'Configuration of a guest',
  description:
    'Configuration of a VM or container (or of a snapshot): every key, property strings split into fields, secrets redacted.',
  input: z.strictObject({
    ...guestTarget,
    snapshot: snapshotName.optional().describe('Read the configuration a snapshot holds instead.'),
  }),
  output: z.object({
    config: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
    fields: z
      .record(z.string(), z.record(z.string(), z.string()))
      .optional()
      .describe('Property strings split into their fields, e.g. net0.bridge.'),
    redacted: z.array(z.string()).optional(),
    digest: z.string().nullable().optional(),
    ...outputExtras,
  }),
  // The guest it acts on, for target.* rules.
  target: (args) => ({ vmid: args.vmid }),
  async run(args, ctx) {
    const raw = await ctx
      .pve()
      .get(
        guestPath(args, 'config'),
        guestConfig,
        args.snapshot ? { snapshot: args.snapshot } : {},
      );
    const view = viewConfig(raw, args.vm_type);
    const digest = typeof raw.digest === 'string' ? raw.digest : null;
    const lines = Object.entries(view.config).map(([k, v]) => `${k}: ${String(v).split('\n')[0]}`);
    const head = `${guestLabel(args)} on ${args.node}${args.snapshot ? `, snapshot ${args.snapshot}` : ''}:`;
    return {
      structured: { config: view.config, fields: view.fields, redacted: view.redacted, digest },
      text: `${head}\n${lines.join('\n')}`,
    };
  },
});
