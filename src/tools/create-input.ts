// Arguments of pve_create_qemu_vm, validated to Proxmox's own formats, and the exact form
// parameters they become. Property strings are parsed key by key and re-printed canonically,
// so no value can carry another parameter or key to Proxmox.

import { z } from 'zod';
import {
  CONTROL_CHAR_RE,
  DNS_NAME_RE,
  DNS_NAME_RULE,
  POOL_RE,
  TAG_RE,
  VMID_MAX,
  VMID_MIN,
  quote,
} from '../proxmox/formats';
import {
  SCSI_FORMAT,
  parseAgent,
  parseBoot,
  parseCdrom,
  parseCpu,
  parseDrive,
  parseNet,
  type OptionResult,
  type PropertyValue,
} from '../proxmox/qemu-options';
import { nodeName, tagName } from './common';

const OSTYPES = ['other', 'wxp', 'w2k', 'w2k3', 'w2k8', 'wvista', 'win7', 'win8', 'win10', 'win11', 'l24', 'l26', 'solaris'] as const;
const SCSIHW = ['lsi', 'lsi53c810', 'virtio-scsi-pci', 'virtio-scsi-single', 'megasas', 'pvscsi'] as const;
/** 4 TiB, qemu-server's hotplug ceiling; far above any host we expect. */
const MAX_MEMORY_MIB = 4_194_304;

/** A property-string argument: a bounded string, parsed into its canonical form. */
function propertyString(parse: (text: string) => OptionResult, example: string) {
  return z
    .string()
    .min(1)
    .max(1024)
    .transform((text, ctx): PropertyValue => {
      const result = parse(text.trim());
      if (result.ok) return result.value;
      ctx.addIssue({ code: 'custom', message: `${result.error} (e.g. ${example})` });
      return z.NEVER;
    });
}

const tags = z
  .union([z.array(tagName).max(32), z.string().max(1024)])
  .transform((value, ctx): string[] => {
    const list = Array.isArray(value) ? value : value.split(/[;, ]+/).filter(Boolean);
    const bad = list.find((t) => !TAG_RE.test(t) || t.length > 64);
    if (bad !== undefined) {
      ctx.addIssue({ code: 'custom', message: `${quote(bad)} is not a tag (letters, digits, "_", "-", "+", ".")` });
      return z.NEVER;
    }
    return [...new Set(list.map((t) => t.toLowerCase()))];
  });

const description = z
  .string()
  .max(8192)
  .refine((s) => !CONTROL_CHAR_RE.test(s.replace(/[\n\t]/g, ' ')), {
    message: 'control characters other than newline and tab are not allowed',
  });

export const createInput = z.strictObject({
  node: nodeName.describe('Node to create the VM on, e.g. pve1.'),
  vmid: z.number().int().min(VMID_MIN).max(VMID_MAX).optional().describe('VM id 100–999999999; omitted: the next free id.'),
  name: z
    .string()
    .max(253)
    .regex(DNS_NAME_RE, { error: `must be ${DNS_NAME_RULE}` })
    .optional()
    .describe('VM name, a DNS name such as web-01.'),
  memory: z.number().int().min(16).max(MAX_MEMORY_MIB).optional().describe('Memory in MiB (default 512).'),
  cores: z.number().int().min(1).max(1024).optional().describe('Cores per socket (default 1).'),
  sockets: z.number().int().min(1).max(16).optional().describe('CPU sockets (default 1).'),
  net0: propertyString(parseNet, 'virtio,bridge=vmbr0').optional().describe('First NIC, e.g. virtio,bridge=vmbr0,firewall=1.'),
  scsi0: propertyString((t) => parseDrive(t, SCSI_FORMAT), 'local-lvm:32,iothread=1')
    .optional()
    .describe('First SCSI disk: STORAGE:SIZE_GiB for a new disk, e.g. local-lvm:32,discard=on.'),
  ide2: propertyString(parseCdrom, 'local:iso/debian-12.iso,media=cdrom')
    .optional()
    .describe('The CD-ROM on IDE slot 2, e.g. the installer ISO local:iso/NAME.iso (media=cdrom is added), or none.'),
  ostype: z.enum(OSTYPES).optional().describe('Guest OS type, e.g. l26 for Linux, win11.'),
  cpu: propertyString(parseCpu, 'host').optional().describe('CPU model, e.g. host or x86-64-v2-AES.'),
  scsihw: z.enum(SCSIHW).optional().describe('SCSI controller, e.g. virtio-scsi-single.'),
  boot: propertyString(parseBoot, 'order=scsi0;ide2;net0').optional().describe('Boot order, e.g. order=scsi0;ide2;net0.'),
  agent: z
    .union([z.boolean(), z.string().min(1).max(256)])
    .transform((value, ctx): PropertyValue => {
      const result = parseAgent(typeof value === 'boolean' ? (value ? '1' : '0') : value.trim());
      if (result.ok) return result.value;
      ctx.addIssue({ code: 'custom', message: `${result.error} (e.g. 1,fstrim_cloned_disks=1)` });
      return z.NEVER;
    })
    .optional()
    .describe('QEMU guest agent: true/false or e.g. 1,fstrim_cloned_disks=1.'),
  tags: tags.optional().describe('Tags, as a list or separated by ";".'),
  pool: z.string().max(200).regex(POOL_RE, { error: 'must be a pool id: letters, digits, ".", "-", "_" (nested with "/")' }).optional(),
  start: z.boolean().optional().describe('Start the VM once created (default false).'),
  description: description.optional().describe('Notes shown in the VM summary (at most 8192 characters).'),
  wait: z.boolean().default(false).describe('Wait for the creation task to finish (bounded by timeout_s).'),
  timeout_s: z.number().int().min(1).max(120).default(60).describe('How long wait may take, 1–120 s (default 60).'),
  confirm: z.boolean().default(false).describe('Must be true to create. Without it, only a preview is returned.'),
});
export type CreateArgs = z.output<typeof createInput>;

/** The form parameters for POST /nodes/{node}/qemu, except vmid (which may come from nextid). */
export function createParams(args: CreateArgs): Record<string, string> {
  const p: Record<string, string> = {};
  const put = (key: string, value: string | number | boolean | undefined): void => {
    if (value === undefined) return;
    p[key] = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
  };
  put('name', args.name);
  put('memory', args.memory);
  put('cores', args.cores);
  put('sockets', args.sockets);
  put('net0', args.net0?.text);
  put('scsi0', args.scsi0?.text);
  put('ide2', args.ide2?.text);
  put('ostype', args.ostype);
  put('cpu', args.cpu?.text);
  put('scsihw', args.scsihw);
  put('boot', args.boot?.text);
  put('agent', args.agent?.text);
  put('tags', args.tags?.length ? args.tags.join(';') : undefined);
  put('pool', args.pool);
  put('start', args.start);
  put('description', args.description);
  return p;
}
