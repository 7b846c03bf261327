// Is this URL's host a public name or address? The rule the OAuth library's outbound fetches
// (client metadata documents, a client's jwks_uri) must pass, in every environment: on
// Cloudflare's edge global_fetch_strictly_public also stops them, but workerd elsewhere
// (wrangler dev, self-hosted) would fetch loopback, cloud metadata (169.254.169.254) or the LAN.
// The classification is ../net/host-class.ts (shared with approval receivers); this rule refuses
// every special-purpose address and special-use name it finds there, with why.

import { classifyHost } from '../net/host-class';

export type HostCheck =
  | { ok: true; host: string }
  | { ok: false; reason: 'invalid_url' }
  | { ok: false; reason: 'not_https'; protocol: string }
  | { ok: false; reason: 'non_public_address'; host: string; range: string }
  | { ok: false; reason: 'malformed_name'; host: string }
  | { ok: false; reason: 'single_label_name'; host: string }
  | { ok: false; reason: 'special_use_name'; host: string; suffix: string };

/** Checks an outbound URL: https only, and a host that is a public DNS name or IP address. */
export function checkPublicHttpsUrl(url: string): HostCheck {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'invalid_url' };
  }
  if (parsed.protocol !== 'https:') {
    return { ok: false, reason: 'not_https', protocol: parsed.protocol };
  }
  return checkPublicHost(parsed.hostname);
}

/** Checks a hostname as `URL.hostname` gives it (IPv6 in brackets). */
export function checkPublicHost(hostname: string): HostCheck {
  const { host, form, scope } = classifyHost(hostname);
  const check = byForm(host, form);
  // A cloud metadata service whose range or name alone would pass (168.63.129.16, metadata.goog).
  return check.ok && scope === 'metadata'
    ? { ok: false, reason: 'non_public_address', host, range: 'a cloud metadata service' }
    : check;
}

function byForm(host: string, form: ReturnType<typeof classifyHost>['form']): HostCheck {
  switch (form.kind) {
    case 'ip':
      return form.range
        ? { ok: false, reason: 'non_public_address', host, range: form.range }
        : { ok: true, host };
    case 'name':
      return form.suffix
        ? { ok: false, reason: 'special_use_name', host, suffix: form.suffix }
        : { ok: true, host };
    case 'single_label':
      return { ok: false, reason: 'single_label_name', host };
    case 'malformed':
      return { ok: false, reason: 'malformed_name', host };
  }
}
