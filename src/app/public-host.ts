// Is this URL's host a public name or address? The rule the OAuth library's outbound fetches
// (client metadata documents, a client's jwks_uri) must pass, in every environment: on
// Cloudflare's edge global_fetch_strictly_public also stops them, but workerd elsewhere
// (wrangler dev, self-hosted) would fetch loopback, cloud metadata (169.254.169.254) or the LAN.
// Pure: no I/O, so no DNS either — a public name that resolves to a private address passes here.
// Hosts are read with WHATWG `new URL()`, which already turns 0x7f.1, 2130706433 and 0177.0.0.1
// into 127.0.0.1 and writes IPv6 compressed in lower-case hex ([::ffff:7f00:1]).

export type HostCheck =
  | { ok: true; host: string }
  | { ok: false; reason: 'invalid_url' }
  | { ok: false; reason: 'not_https'; protocol: string }
  | { ok: false; reason: 'non_public_address'; host: string; range: string }
  | { ok: false; reason: 'malformed_name'; host: string }
  | { ok: false; reason: 'single_label_name'; host: string }
  | { ok: false; reason: 'special_use_name'; host: string; suffix: string };

/** Not publicly routable (IANA special-purpose registry, RFC 6890 and successors). */
const IPV4_REFUSED: readonly (readonly [string, string])[] = [
  ['0.0.0.0/8', 'this network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/3', 'multicast, reserved, broadcast'],
];

/**
 * Only global unicast (2000::/3) is public: anything outside it is refused after this table,
 * which names the usual ones for the log. Forms that embed an IPv4 address (mapped, compatible,
 * NAT64, 6to4, Teredo in 2001::/32) are refused outright rather than decoded.
 */
const IPV6_REFUSED: readonly (readonly [string, string])[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['::/96', 'IPv4-compatible'],
  ['64:ff9b::/96', 'NAT64'],
  ['64:ff9b:1::/48', 'local NAT64'],
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
  ['2001::/23', 'IETF protocol assignments (Teredo, ORCHID, benchmarking)'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['3fff::/20', 'documentation'],
];

/**
 * Last labels that never name a public host: special-use names (RFC 6761, 6762, 7686, 9476;
 * `arpa` covers home.arpa and in-addr.arpa) and the suffixes networks use for their inside.
 */
const SPECIAL_USE_SUFFIXES = [
  'localhost',
  'local',
  'localdomain',
  'internal',
  'intranet',
  'lan',
  'home',
  'corp',
  'private',
  'test',
  'example',
  'invalid',
  'onion',
  'alt',
  'arpa',
] as const;

const V4 = IPV4_REFUSED.map(([cidr, label]) => ({ ...compileCidr(cidr, parseIpv4), cidr, label }));
const V6 = IPV6_REFUSED.map(([cidr, label]) => ({ ...compileCidr(cidr, parseIpv6), cidr, label }));
const V6_GLOBAL_UNICAST = compileCidr('2000::/3', parseIpv6);

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
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host.startsWith('[') && host.endsWith(']')) {
    const bits = parseIpv6(host.slice(1, -1));
    if (!bits) return { ok: false, reason: 'malformed_name', host };
    const hit = V6.find((r) => matches(bits, r.bits, r.length));
    if (hit) return refusedAddress(host, `${hit.cidr} ${hit.label}`);
    if (!matches(bits, V6_GLOBAL_UNICAST.bits, V6_GLOBAL_UNICAST.length)) {
      return refusedAddress(host, 'outside 2000::/3 global unicast');
    }
    return { ok: true, host };
  }
  const v4 = parseIpv4(host);
  if (v4) {
    const hit = V4.find((r) => matches(v4, r.bits, r.length));
    return hit ? refusedAddress(host, `${hit.cidr} ${hit.label}`) : { ok: true, host };
  }
  const labels = host.split('.');
  const last = labels[labels.length - 1]!;
  // A numeric last label is an IPv4 address in a spelling URL would have rewritten (WHATWG
  // "ends in a number"): never a DNS name, so refuse it rather than guess what it means.
  if (labels.some((label) => label === '') || /^(\d+|0x[0-9a-f]*)$/.test(last)) {
    return { ok: false, reason: 'malformed_name', host };
  }
  if (labels.length < 2) return { ok: false, reason: 'single_label_name', host };
  const suffix = SPECIAL_USE_SUFFIXES.find((s) => s === last);
  return suffix ? { ok: false, reason: 'special_use_name', host, suffix } : { ok: true, host };
}

function refusedAddress(host: string, range: string): HostCheck {
  return { ok: false, reason: 'non_public_address', host, range };
}

/** Addresses as arrays of 16-bit words (IPv4: two), so one prefix test serves both families. */
type Words = readonly number[];

type Prefix = { bits: Words; length: number };

function compileCidr(cidr: string, parse: (text: string) => Words | null): Prefix {
  const [address = '', length = ''] = cidr.split('/');
  const bits = parse(address);
  if (!bits) throw new Error(`bad CIDR in the public-host table: ${cidr}`);
  return { bits, length: Number(length) };
}

function matches(address: Words, prefix: Words, length: number): boolean {
  for (let i = 0, left = length; left > 0; i++, left -= 16) {
    const mask = left >= 16 ? 0xffff : (0xffff << (16 - left)) & 0xffff;
    if (((address[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** Dotted-quad decimal only: the form `URL.hostname` gives every IPv4 host. */
function parseIpv4(text: string): Words | null {
  const parts = text.split('.');
  const valid =
    parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
  if (!valid) return null;
  const [a, b, c, d] = parts.map(Number) as [number, number, number, number];
  return [(a << 8) | b, (c << 8) | d];
}

/** Hex words with at most one `::`, and an optional dotted-quad tail (::ffff:127.0.0.1). */
function parseIpv6(text: string): Words | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  /** One side of the `::`; only the address's very end may be a dotted quad. */
  const words = (half: string, atEnd: boolean): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const parts = half.split(':');
    for (const [i, part] of parts.entries()) {
      const v4 = atEnd && i === parts.length - 1 ? parseIpv4(part) : null;
      if (v4) out.push(...v4);
      else if (/^[0-9a-f]{1,4}$/.test(part)) out.push(parseInt(part, 16));
      else return null;
    }
    return out;
  };
  const head = words(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? words(halves[1]!, true) : [];
  if (!head || !tail) return null;
  const gap = 8 - head.length - tail.length;
  if (halves.length === 2 ? gap < 1 : gap !== 0) return null;
  return [...head, ...new Array<number>(gap).fill(0), ...tail];
}
