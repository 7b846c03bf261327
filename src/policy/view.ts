// The arguments as policy sees them: a parsed property string (net0, scsi0, ...) becomes the
// object of its typed fields, so rules can say args.net0.bridge or args.scsi0.size_gib.

export function policyView(args: unknown): Record<string, unknown> {
  if (!args || typeof args !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    out[key] = isPropertyValue(value) ? value.fields : value;
  }
  return out;
}

function isPropertyValue(value: unknown): value is { text: string; fields: Record<string, unknown> } {
  return !!value && typeof value === 'object' && 'text' in value && 'fields' in value;
}
