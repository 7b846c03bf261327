// Where a host leads: this machine (loopback), a private network, a link-local segment, a cloud's
// metadata service (instance credentials), somewhere no server can be (reserved, documentation,
// multicast), or the public Internet; and what in its form says so (the special-purpose block of
// an address, the special-use suffix of a name). One classification for every outbound rule: the
// OAuth library's fetches (../app/public-host.ts) and approval receivers (../notify/).
// Pure: no I/O, so no DNS either — a public name that resolves to a private address is public
// here. Hosts as WHATWG `new URL().hostname` gives them: it already turns 0x7f.1, 2130706433 and
// 0177.0.0.1 into 127.0.0.1 and writes IPv6 compressed in lower-case hex ([::ffff:7f00:1]).

export type HostScope = 'public' | 'loopback' | 'private' | 'link_local' | 'metadata' | 'reserved';

export type HostForm =
  /** An IP address; `range`: the special-purpose block it is in ("10.0.0.0/8 private"), or null. */
  | { kind: 'ip'; range: string | null }
  /** A DNS name; `suffix`: its special-use last label ("internal"), or null. */
  | { kind: 'name'; suffix: string | null }
  | { kind: 'single_label' }
  | { kind: 'malformed' };

export interface HostClass {
  /** Lower-case, without a trailing dot; IPv6 in brackets. */
  host: string;
  scope: HostScope;
  form: HostForm;
}

type Row = readonly [cidr: string, label: string, scope: HostScope];

/** Not publicly routable (IANA special-purpose registries, RFC 6890 and successors). */
const SPECIAL_RANGES: readonly Row[] = [
  // IPv4.
  ['0.0.0.0/8', 'this network', 'reserved'],
  ['10.0.0.0/8', 'private', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT', 'private'],
  ['127.0.0.0/8', 'loopback', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata)', 'link_local'],
  ['172.16.0.0/12', 'private', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments', 'reserved'],
  ['192.0.2.0/24', 'documentation', 'reserved'],
  ['192.88.99.0/24', '6to4 relay anycast', 'reserved'],
  ['192.168.0.0/16', 'private', 'private'],
  ['198.18.0.0/15', 'benchmarking', 'reserved'],
  ['198.51.100.0/24', 'documentation', 'reserved'],
  ['203.0.113.0/24', 'documentation', 'reserved'],
  ['224.0.0.0/3', 'multicast, reserved, broadcast', 'reserved'],
  // IPv6: only global unicast (2000::/3) is public; anything outside it is reserved after these,
  // which name the usual ones. Forms that embed an IPv4 address (compatible, NAT64, 6to4, Teredo
  // in 2001::/32) are reserved rather than decoded; an IPv4-mapped one leads where its IPv4
  // address does, when that is not public (../notify/ lets [::ffff:10.0.0.1] be private).
  ['::/128', 'unspecified', 'reserved'],
  ['::1/128', 'loopback', 'loopback'],
  ['::ffff:0:0/96', 'IPv4-mapped', 'reserved'],
  ['::/96', 'IPv4-compatible', 'reserved'],
  ['64:ff9b::/96', 'NAT64', 'reserved'],
  ['64:ff9b:1::/48', 'local NAT64', 'reserved'],
  ['fc00::/7', 'unique local', 'private'],
  ['fe80::/10', 'link-local', 'link_local'],
  ['fec0::/10', 'site-local', 'reserved'],
  ['ff00::/8', 'multicast', 'reserved'],
  ['2001::/23', 'IETF protocol assignments (Teredo, ORCHID, benchmarking)', 'reserved'],
  ['2001:db8::/32', 'documentation', 'reserved'],
  ['2002::/16', '6to4', 'reserved'],
  ['3fff::/20', 'documentation', 'reserved'],
];

/**
 * Cloud metadata services, which hand out the instance's credentials: AWS, GCP, Azure, OpenStack
 * and others (169.254.169.254, AWS's fd00:ec2::254), AWS container credentials (169.254.170.2)
 * and EKS Pod Identity (169.254.170.23, fd00:ec2::23), Alibaba Cloud (100.100.100.200), Azure's
 * WireServer (168.63.129.16, a public-looking address only a VM reaches).
 */
const METADATA_ADDRESSES = [
  '169.254.169.254/32',
  '169.254.170.2/32',
  '169.254.170.23/32',
  '100.100.100.200/32',
  '168.63.129.16/32',
  'fd00:ec2::254/128',
  'fd00:ec2::23/128',
] as const;
/** Names of metadata services (GCP's, AWS's) as resolvers inside those clouds answer them. */
const METADATA_NAMES: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

/**
 * Last labels that never name a public host: special-use names (RFC 6761, 6762, 7686, 9476;
 * `arpa` covers home.arpa and in-addr.arpa) and the suffixes networks use for their inside.
 */
const SPECIAL_USE_SUFFIXES: readonly (readonly [string, HostScope])[] = [
  ['localhost', 'loopback'],
  ['local', 'private'],
  ['localdomain', 'private'],
  ['internal', 'private'],
  ['intranet', 'private'],
  ['lan', 'private'],
  ['home', 'private'],
  ['corp', 'private'],
  ['private', 'private'],
  ['test', 'reserved'],
  ['example', 'reserved'],
  ['invalid', 'reserved'],
  ['onion', 'reserved'],
  ['alt', 'reserved'],
  ['arpa', 'reserved'],
];

const RANGES = SPECIAL_RANGES.map(([cidr, label, scope]) => ({
  ...cidrOf(cidr),
  cidr,
  label,
  scope,
}));
const METADATA = METADATA_ADDRESSES.map(cidrOf);
/** An IPv4 prefix is two words, an IPv6 one eight: a family's entries are matched alone. */
const V4 = RANGES.filter((r) => r.bits.length === 2);
const V6 = RANGES.filter((r) => r.bits.length === 8);
const V4_METADATA = METADATA.filter((m) => m.bits.length === 2);
const V6_METADATA = METADATA.filter((m) => m.bits.length === 8);
const V6_GLOBAL_UNICAST = cidrOf('2000::/3');
const V6_MAPPED = cidrOf('::ffff:0:0/96');

/** Classifies a hostname as `URL.hostname` gives it (IPv6 in brackets). */
export function classifyHost(hostname: string): HostClass {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host.startsWith('[') && host.endsWith(']')) return classifyIpv6(host);
  const v4 = parseIpv4(host);
  if (v4) {
    const hit = V4.find((r) => matches(v4, r));
    const scope = V4_METADATA.some((m) => matches(v4, m)) ? 'metadata' : (hit?.scope ?? 'public');
    return { host, scope, form: { kind: 'ip', range: hit ? `${hit.cidr} ${hit.label}` : null } };
  }
  const labels = host.split('.');
  const last = labels[labels.length - 1]!;
  // A numeric last label is an IPv4 address in a spelling URL would have rewritten (WHATWG
  // "ends in a number"): never a DNS name, so refuse it rather than guess what it means.
  if (labels.some((label) => label === '') || /^(\d+|0x[0-9a-f]*)$/.test(last)) {
    return { host, scope: 'reserved', form: { kind: 'malformed' } };
  }
  const special = SPECIAL_USE_SUFFIXES.find(([s]) => s === last);
  const scope: HostScope = METADATA_NAMES.has(host)
    ? 'metadata'
    : host === 'home.arpa' || host.endsWith('.home.arpa')
      ? 'private'
      : (special?.[1] ?? (labels.length < 2 ? 'private' : 'public'));
  // A name without a dot is completed by the local resolver's search list: somewhere inside.
  if (labels.length < 2) return { host, scope, form: { kind: 'single_label' } };
  return { host, scope, form: { kind: 'name', suffix: special?.[0] ?? null } };
}

function classifyIpv6(host: string): HostClass {
  const bits = parseIpv6(host.slice(1, -1));
  if (!bits) return { host, scope: 'reserved', form: { kind: 'malformed' } };
  const hit = V6.find((r) => matches(bits, r));
  if (!hit) {
    const global = matches(bits, V6_GLOBAL_UNICAST);
    return global
      ? { host, scope: 'public', form: { kind: 'ip', range: null } }
      : { host, scope: 'reserved', form: { kind: 'ip', range: 'outside 2000::/3 global unicast' } };
  }
  const range = `${hit.cidr} ${hit.label}`;
  if (V6_METADATA.some((m) => matches(bits, m)))
    return { host, scope: 'metadata', form: { kind: 'ip', range } };
  if (matches(bits, V6_MAPPED)) {
    const inner = classifyHost(ipv4Text(bits[6]!, bits[7]!)).scope;
    return { host, scope: inner === 'public' ? 'reserved' : inner, form: { kind: 'ip', range } };
  }
  return { host, scope: hit.scope, form: { kind: 'ip', range } };
}

/** Addresses as arrays of 16-bit words (IPv4: two), so one prefix test serves both families. */
type Words = readonly number[];

type Prefix = { bits: Words; length: number };

function cidrOf(cidr: string): Prefix {
  const [address = '', length = ''] = cidr.split('/');
  const bits = address.includes(':') ? parseIpv6(address) : parseIpv4(address);
  if (!bits) throw new Error(`bad CIDR in the host tables: ${cidr}`);
  return { bits, length: Number(length) };
}

function matches(address: Words, { bits, length }: Prefix): boolean {
  for (let i = 0, left = length; left > 0; i++, left -= 16) {
    const mask = left >= 16 ? 0xffff : (0xffff << (16 - left)) & 0xffff;
    if (((address[i] ?? 0) & mask) !== ((bits[i] ?? 0) & mask)) return false;
  }
  return true;
}

function ipv4Text(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
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
