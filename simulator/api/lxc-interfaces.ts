// GET /nodes/{node}/lxc/{vmid}/interfaces (pve-container API2/LXC.pm `ip`, PVE::LXC::
// get_interfaces): the running container's interfaces as seen from inside its network namespace:
// loopback, then one per netN with its hwaddr and its static address (dhcp ones get the seeded
// LAN's address), each listed both PVE 8's way (inet, inet6) and PVE 9's (ip-addresses). A
// stopped container has no namespace: `data` is null.
import { perm } from '../access/permissions.ts';
import { parseProps } from '../cluster/guest-config.ts';
import { GUEST_PARAMS, type HandlerContext, type Route } from './handler-context.ts';
import { loadGuest } from './guest-helpers.ts';

function containerInterfaces(ctx: HandlerContext): unknown {
  const guest = loadGuest(ctx, 'lxc');
  if (guest.status !== 'running') return null;
  const nics = Object.keys(guest.config)
    .filter((key) => /^net\d+$/.test(key))
    .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)))
    .map((key) => {
      const net = parseProps(guest.config[key] ?? '', 'name');
      const index = Number(key.slice(3));
      const ip =
        net.ip && net.ip !== 'dhcp' && net.ip !== 'manual'
          ? net.ip
          : `10.10.${index}.${(guest.vmid % 200) + 20}/24`;
      const ip6 =
        net.ip6 && net.ip6 !== 'dhcp' && net.ip6 !== 'auto' && net.ip6 !== 'manual'
          ? net.ip6
          : undefined;
      return entry(net.name ?? `eth${index}`, (net.hwaddr ?? '').toLowerCase(), ip, ip6);
    });
  return [entry('lo', '00:00:00:00:00:00', '127.0.0.1/8', '::1/128'), ...nics];
}

function entry(
  name: string,
  mac: string,
  inet: string,
  inet6: string | undefined,
): Record<string, unknown> {
  const address = (cidr: string, type: string) => {
    const [ip, prefix] = cidr.split('/');
    return { 'ip-address': ip, 'ip-address-type': type, prefix: Number(prefix) };
  };
  return {
    name,
    hwaddr: mac,
    'hardware-address': mac,
    inet,
    ...(inet6 ? { inet6 } : {}),
    'ip-addresses': [address(inet, 'inet'), ...(inet6 ? [address(inet6, 'inet6')] : [])],
  };
}

export const LXC_INTERFACE_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/lxc/{vmid}/interfaces',
    permissions: perm('/vms/{vmid}', ['VM.Audit']),
    schema: GUEST_PARAMS,
    handle: containerInterfaces,
  },
];
