// NIC values as qemu-server and pve-container write them: parse_net/print_net add a random MAC
// when none is given (clones always get a new one), VMs print `<model>=<mac>` first, containers
// print `name=` first and always carry hwaddr and type=veth.
import { printProps, randomMac } from '../cluster/guest-config.ts';
import { LXC_NET_FORMAT } from '../schema/lxc-formats.ts';
import { NET_FORMAT } from '../schema/qemu-device-formats.ts';
import { parsePropertyString } from '../schema/schema-check.ts';

export function printNet(value: string, newMac = false): string {
  const { model = 'virtio', macaddr, ...rest } = parsePropertyString(NET_FORMAT, value, 'net');
  const mac = newMac || macaddr === undefined ? randomMac() : macaddr;
  const tail = printProps(rest);
  return `${model}=${mac}${tail ? `,${tail}` : ''}`;
}

export function printLxcNet(value: string, newMac = false): string {
  const net = parsePropertyString(LXC_NET_FORMAT, value, 'net');
  if (newMac || net.hwaddr === undefined) net.hwaddr = randomMac();
  net.type = 'veth';
  return printProps(net, { required: ['name'] });
}
