// A request path as its API route: /nodes/pve1/qemu/100/status/current becomes
// /nodes/{node}/qemu/{vmid}/status/current, so that a span's name (`GET {route}`) has as few
// values as the API has routes, whatever the guest or node. In PVE's API tree a value follows the
// collection it is an item of, so the collection's name says what the next segment is; the names
// here are PVE 9.1's own (test/proxmox/path-template.node.test.ts derives every route of the
// schema back to itself). A segment no collection names is kept only if it is spelled as the
// words of PVE 9.1's routes all are (lower-case letters, words joined by `-` or `_`); any other
// (a digit, a capital, a dot: a vmid, a volume) is a value too. A path the caller wrote (a raw
// request's) keeps less: its first segment if it is one of the API's roots, the collections and
// their items; every other segment, whatever its spelling, is `{id}`, so that no text of the
// caller's names a span. Pure.

/** The item of each collection, by the collection's name. */
const ITEM_OF: Readonly<Record<string, string>> = {
  account: 'name',
  aliases: 'name',
  backup: 'id',
  content: 'volume',
  controllers: 'controller',
  directory: 'name',
  dir: 'id',
  dns: 'dns',
  domains: 'realm',
  fabric: 'id',
  fabrics: 'fabric',
  flags: 'flag',
  fs: 'name',
  gotify: 'name',
  groups: 'group',
  ipams: 'ipam',
  ipset: 'name',
  lvm: 'name',
  lvmthin: 'name',
  lxc: 'vmid',
  matchers: 'name',
  mds: 'name',
  mgr: 'id',
  mon: 'monid',
  network: 'iface',
  node: 'fabric_id',
  nodes: 'node',
  osd: 'osdid',
  pci: 'id',
  plugins: 'id',
  pool: 'name',
  pools: 'poolid',
  qemu: 'vmid',
  'realm-sync': 'id',
  replication: 'id',
  resources: 'sid',
  roles: 'roleid',
  rules: 'pos',
  sendmail: 'name',
  server: 'id',
  services: 'service',
  smtp: 'name',
  snapshot: 'snapname',
  storage: 'storage',
  subnets: 'subnet',
  targets: 'name',
  tasks: 'upid',
  tfa: 'userid',
  token: 'tokenid',
  usb: 'id',
  users: 'userid',
  vnets: 'vnet',
  webhook: 'name',
  zfs: 'name',
  zones: 'zone',
};

/** Where the collection before names its item otherwise (`parent/collection`). */
const ITEM_IN: Readonly<Record<string, string>> = {
  'access/groups': 'groupid',
  'ha/rules': 'rule',
  'hardware/pci': 'pci-id-or-mapping',
};

/** The routes with a value after a value: by the collection and its item. */
const ITEM_AFTER: Readonly<Record<string, string>> = {
  'groups/{group}': 'pos',
  'ipset/{name}': 'cidr',
  'node/{fabric_id}': 'node_id',
  'tfa/{userid}': 'id',
};

/** Collections with routes of their own beside their items (/nodes/{node}/capabilities/qemu/cpu). */
const WORDS_IN: Readonly<Record<string, ReadonlySet<string>>> = {
  qemu: new Set(['cpu', 'cpu-flags', 'machines', 'migration']),
  fabrics: new Set(['all', 'fabric', 'node']),
};

/** The roots of PVE's API (GET /api2/json lists them). */
const ROOTS: ReadonlySet<string> = new Set([
  'access',
  'cluster',
  'nodes',
  'pools',
  'storage',
  'version',
]);

/** How every word of PVE 9.1's routes is spelled. */
const ROUTE_WORD = /^[a-z]{1,32}(?:[-_][a-z]{1,32}){0,3}$/;

/**
 * The route of `path` (no query), its values as `{name}`; `callers`: the path is the caller's
 * own text (keep only the API's roots and collections).
 */
export function pathTemplate(path: string, callers = false): string {
  const out: string[] = [];
  const segments = path.split('/').slice(1);
  for (const [i, segment] of segments.entries()) {
    const item = i === 0 ? undefined : itemAfter(out, i, segment);
    const word = callers
      ? i === 0
        ? ROOTS.has(segment)
        : Object.hasOwn(ITEM_OF, segment)
      : ROUTE_WORD.test(segment);
    out.push(item !== undefined ? `{${item}}` : word ? segment : '{id}');
  }
  return `/${out.join('/')}`;
}

/** A table's entry, never a member every object has (`constructor`, `__proto__`). */
function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

function itemAfter(out: readonly string[], i: number, segment: string): string | undefined {
  const before = out[i - 1]!;
  if (before.startsWith('{')) return own(ITEM_AFTER, `${out[i - 2]}/${before}`);
  if (own(WORDS_IN, before)?.has(segment)) return undefined;
  return own(ITEM_IN, `${out[i - 2]}/${before}`) ?? own(ITEM_OF, before);
}
