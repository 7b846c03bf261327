// Which addresses an approval receiver may have. Whoever can edit APPROVAL_WEBHOOKS can make this
// server POST to any address, and only Cloudflare's edge keeps a Worker off this machine, the LAN
// and the cloud's metadata service: `wrangler dev` and a self-hosted workerd do not. So:
//   - https to a public host: always;
//   - http or https to loopback (localhost, 127.0.0.0/8, [::1]): in local development only, where
//     the server answers loopback alone (IDP=dev or AUTH_MODE=none) and the receiver is the
//     developer's own;
//   - https to a private network (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, names under
//     .internal, .lan ...) or a link-local address (169.254/16, fe80::/10): only for a receiver
//     that says `"private_network": true`, which /health names;
//   - a cloud metadata service (169.254.169.254, fd00:ec2::254, metadata.google.internal ...) or
//     an address no receiver can have (0.0.0.0, documentation, multicast, NAT64): never. Metadata
//     hands out the instance's credentials; no opt-in is worth that.
// The address is judged as written (../net/host-class.ts, after WHATWG URL parsing, which reads
// 2130706433 and 0x7f.1 as 127.0.0.1); a public name that resolves to a private address is not
// caught here, and deliveries never follow a redirect (./deliver.ts). Pure.

import { classifyHost } from '../net/host-class';

export interface ReceiverRules {
  /** The server answers loopback requests only (IDP=dev or AUTH_MODE=none). */
  localDevelopment: boolean;
}

/**
 * Why a receiver may not have this address, or null when it may. Names the host, never the rest:
 * a receiver's path or query can be its credential (Slack, Teams).
 */
export function receiverAddressProblem(
  url: string,
  privateNetwork: boolean,
  rules: ReceiverRules,
): string | null {
  if (!URL.canParse(url)) return 'url: not a URL';
  const u = new URL(url);
  const https = 'url: https only (http only to loopback, in local development)';
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return https;
  if (u.username || u.password)
    return 'url: no user name or password in the address ("secret" signs json bodies)';
  const { host, scope, form } = classifyHost(u.hostname);
  const why =
    form.kind === 'ip' && form.range
      ? ` (${form.range})`
      : form.kind === 'name' && form.suffix
        ? ` (.${form.suffix})`
        : form.kind === 'single_label'
          ? ' (a name without a dot, completed by the local resolver)'
          : '';
  const optIn = 'set "private_network": true on this receiver to send there';
  switch (scope) {
    case 'metadata':
      return `url: ${host} is a cloud metadata address: never a receiver, whatever it says`;
    case 'reserved':
      return `url: ${host} is not a public address or name${why}, nor one a receiver can have`;
    case 'loopback':
      return rules.localDevelopment
        ? null
        : `url: ${host} is a loopback address, taken only in local development (IDP=dev or AUTH_MODE=none)`;
    case 'private':
      if (!privateNetwork) return `url: ${host} is on a private network${why}: ${optIn}`;
      break;
    case 'link_local':
      if (!privateNetwork) return `url: ${host} is a link-local address${why}: ${optIn}`;
      break;
    case 'public':
      break;
  }
  return u.protocol === 'https:' ? null : https;
}
