// The arguments as policy sees them: a parsed property string (net0, scsi0, ...) becomes the
// object of its typed fields, so rules can say args.net0.bridge or args.scsi0.size_gib; inside an
// object argument (pve_set_vm_config's config) too: args.config.net0.bridge. Only a value our
// parsers made counts as one (isPropertyValue), never an object the caller sent.

import { isPropertyValue } from '../core/property-value';

export function policyView(args: unknown): Record<string, unknown> {
  if (!args || typeof args !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) out[key] = viewOf(value);
  return out;
}

function viewOf(value: unknown): unknown {
  if (isPropertyValue(value)) return value.fields;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, viewOf(v)]));
}
