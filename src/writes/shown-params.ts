// Parameters as results, previews and approvers see them: the exact values, except secrets
// (passwords, keys, tokens: src/proxmox/secret-params.ts), which never leave the call that sends
// them.

import { SECRET_PARAMS } from '../proxmox/secret-params';

export const SECRET_SHOWN = '[redacted]';

export function shownParams(params: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, SECRET_PARAMS.has(k) ? SECRET_SHOWN : v]),
  );
}

/** `k=v, k=v` for a sentence, secrets redacted. */
export function describeParams(params: Readonly<Record<string, string>>): string {
  return Object.entries(shownParams(params))
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}
