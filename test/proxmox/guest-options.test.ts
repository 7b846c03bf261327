// Container options, cloud-init settings, IP settings, resize sizes and volumes: what each parser
// accepts (and the canonical text it sends), and what it refuses with which words.

import { describe, expect, it } from 'vitest';
import {
  encodeSshKeysForVm,
  parseIpconfig,
  parseSearchDomains,
  parseSshKeys,
} from '../../src/proxmox/cloud-init';
import { parseResizeSize, resizedBytes, sizeBytes } from '../../src/proxmox/disk-size';
import {
  checkOstemplate,
  parseLxcNet,
  parseMountPoint,
  parseRootfs,
} from '../../src/proxmox/lxc-options';
import { isIPv6, parseAddressList } from '../../src/proxmox/net-address';
import { volumeOwner } from '../../src/proxmox/volumes';

const KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@example.com';

type Result = { ok: true; value: unknown } | { ok: false; error: string };
const refuses = (r: Result, message: RegExp) => {
  expect(r.ok).toBe(false);
  expect(!r.ok && r.error).toMatch(message);
};

describe('parseLxcNet', () => {
  it.each([
    [
      'name=eth0,bridge=vmbr0,ip=dhcp',
      'bridge=vmbr0,ip=dhcp,name=eth0',
      { name: 'eth0', bridge: 'vmbr0', ip: 'dhcp' },
    ],
    [
      'name=eth0,bridge=vmbr1,ip=10.0.0.9/24,gw=10.0.0.1,ip6=auto,tag=5,firewall=on',
      'bridge=vmbr1,firewall=1,gw=10.0.0.1,ip=10.0.0.9/24,ip6=auto,name=eth0,tag=5',
      { tag: 5, firewall: true },
    ],
    [
      'name=eth1,ip6=2001:db8::9/64,gw6=2001:db8::1,type=veth,trunks=10;20',
      'gw6=2001:db8::1,ip6=2001:db8::9/64,name=eth1,trunks=10;20,type=veth',
      { gw6: '2001:db8::1' },
    ],
  ])('accepts %s', (input, text, fields) => {
    const r = parseLxcNet(input);
    expect(r.ok && r.value.text).toBe(text);
    expect(r.ok && r.value.fields).toMatchObject(fields);
  });

  it.each([
    ['bridge=vmbr0,ip=dhcp', /name \(the interface inside the container\) is required/],
    ['virtio,bridge=vmbr0', /a leading model such as virtio is for VMs/],
    ['name=eth0,ip=10.0.0.9', /not an IPv4 address with its prefix/],
    ['name=eth0,ip=10.0.0.9/4', /not an IPv4 address with its prefix/],
    ['name=eth0,ip=dhcp,gw=10.0.0.1', /gw needs a static ip/],
    ['name=eth0,ip6=auto,gw6=fe80::1', /gw6 needs a static ip6/],
    ['name=eth0,ip=300.1.1.1/24', /not an IPv4 address/],
    ['name=eth0,type=macvlan', /type must be one of veth/],
    ['name=eth0,trunks=1-5', /not a VLAN list/],
    ['name=eth0,model=virtio', /unknown key "model"/],
    ['name=eth0;bridge=vmbr0', /must not contain "="/],
  ])('refuses %s', (input, message) => refuses(parseLxcNet(input), message));
});

const MOUNTS = { rootfs: parseRootfs, mp: parseMountPoint };

describe('root file system and mount points', () => {
  it.each([
    ['rootfs', 'local-lvm:8', 'local-lvm:8', { storage: 'local-lvm', size_gib: 8, new_disk: true }],
    [
      'rootfs',
      'volume=local-lvm:vm-110-disk-0,size=8G,acl=1',
      'local-lvm:vm-110-disk-0,acl=1,size=8G',
      { volume: 'local-lvm:vm-110-disk-0', new_disk: false },
    ],
    [
      'mp',
      'local-lvm:16,mp=/srv/data,backup=1',
      'local-lvm:16,backup=1,mp=/srv/data',
      { mp: '/srv/data', size_gib: 16 },
    ],
  ])('%s accepts %s', (kind, input, text, fields) => {
    const r = MOUNTS[kind as keyof typeof MOUNTS](input);
    expect(r.ok && r.value.text).toBe(text);
    expect(r.ok && r.value.fields).toMatchObject(fields);
  });

  it('shows a new volume as storage and size, never as an existing volume', () => {
    const r = parseRootfs('local-lvm:8');
    expect(r.ok && 'volume' in r.value.fields).toBe(false);
  });

  it.each([
    ['rootfs', '/var/lib/host', /absolute paths are not allowed/],
    ['rootfs', 'local-lvm:0', /needs a size above 0/],
    ['rootfs', 'local:../../etc/pve', /is not STORAGE:SIZE_GiB/],
    [
      'rootfs',
      'local:images/../../etc/pve',
      /must not contain empty, "\." or "\.\." path segments/,
    ],
    ['rootfs', 'local-lvm:8,mp=/x', /unknown key "mp"/],
    ['rootfs', 'local-lvm:8,mountoptions=suid', /not mount options/],
    ['mp', 'local-lvm:8', /mp \(the path inside the container\) is required/],
    ['mp', 'local-lvm:8,mp=/srv/../etc', /must not contain "\." or "\.\." segments/],
    ['mp', 'local-lvm:8,mp=relative', /not an absolute path/],
    ['mp', '/dev/sdb,mp=/mnt', /absolute paths are not allowed/],
  ])('%s refuses %s', (kind, input, message) =>
    refuses(MOUNTS[kind as keyof typeof MOUNTS](input), message),
  );
});

describe('checkOstemplate', () => {
  it.each([
    'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
    'nas.backup:vztmpl/alpine-3.22-default_20250617_amd64.tar.xz',
  ])('accepts %s', (v) => {
    expect(checkOstemplate(v)).toBeNull();
  });
  it.each([
    'local:iso/debian.iso',
    '/var/lib/vz/template/cache/x.tar.zst',
    'local:vztmpl/../x.tar.gz',
    'local:vztmpl/x.tar.zst;rm',
    'local:vztmpl/sub/x.tar.gz',
  ])('refuses %s', (v) => {
    expect(checkOstemplate(v)).toMatch(/is not a container template volume/);
  });
});

describe('cloud-init settings', () => {
  it.each([
    ['ip=dhcp', 'ip=dhcp'],
    ['ip=10.0.0.5/24,gw=10.0.0.1', 'gw=10.0.0.1,ip=10.0.0.5/24'],
    ['ip6=auto', 'ip6=auto'],
    ['ip6=2001:db8::5/64,gw6=2001:db8::1,ip=dhcp', 'gw6=2001:db8::1,ip=dhcp,ip6=2001:db8::5/64'],
  ])('ipconfig accepts %s', (input, text) => {
    const r = parseIpconfig(input);
    expect(r.ok && r.value.text).toBe(text);
  });

  it.each([
    ['gw=10.0.0.1', /give ip/],
    ['ip=dhcp,gw=10.0.0.1', /gw needs a static ip/],
    ['ip=10.0.0.5', /not an IPv4 address with its prefix/],
    ['ip=auto', /not an IPv4 address with its prefix/],
    ['ip=10.0.0.5/24,bridge=vmbr0', /unknown key "bridge"/],
  ])('ipconfig refuses %s', (input, message) => refuses(parseIpconfig(input), message));

  it('takes SSH keys one per line and URL-encodes them for a VM, as qemu-server unescapes them', () => {
    const r = parseSshKeys(`  ${KEY}\n\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== bob\n`);
    expect(r).toEqual({ ok: true, value: `${KEY}\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== bob` });
    const encoded = encodeSshKeysForVm(r.ok ? r.value : '');
    expect(encoded).toMatch(/^[-%a-zA-Z0-9_.!~*'()]*$/);
    expect(decodeURIComponent(encoded)).toBe(r.ok && r.value);
  });

  it.each([
    ['', /at least one OpenSSH public key/],
    ['-----BEGIN OPENSSH PRIVATE KEY-----', /not an OpenSSH public key .*never a private key/],
    ['ssh-ed25519', /not an OpenSSH public key/],
    ['ssh-ed25519 AAAA$(reboot) x', /not an OpenSSH public key/],
    ['ssh-foo AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkV x', /not an OpenSSH public key/],
  ])('refuses SSH keys %j', (input, message) => refuses(parseSshKeys(input), message));

  it('takes DNS servers and search domains as lists', () => {
    expect(parseAddressList('10.0.0.53, 2001:db8::53')).toEqual({
      ok: true,
      value: '10.0.0.53 2001:db8::53',
    });
    refuses(parseAddressList('dns.example.com'), /not an IP address/);
    refuses(parseAddressList('1.1.1.1 1.0.0.1 8.8.8.8 9.9.9.9'), /1 to 3 IP addresses/);
    expect(parseSearchDomains('example.com;lab.example.com')).toEqual({
      ok: true,
      value: 'example.com lab.example.com',
    });
    refuses(parseSearchDomains('exa_mple.com'), /not a DNS domain/);
  });

  it.each([
    ['::1', true],
    ['2001:db8::1', true],
    ['::ffff:10.0.0.1', true],
    ['2001:db8:::1', false],
    ['1:2:3:4:5:6:7:8:9', false],
    ['fe80::1%eth0', false],
  ])('isIPv6(%s) is %s', (v, ok) => {
    expect(isIPv6(v)).toBe(ok);
  });
});

describe('resize sizes', () => {
  it.each([
    ['+10G', { grow: true, gib: 10 }],
    ['40G', { grow: false, gib: 40 }],
    ['+512M', { grow: true, gib: 0.5 }],
    ['1.5T', { grow: false, gib: 1536 }],
  ])('reads %s', (input, fields) => {
    const r = parseResizeSize(input);
    expect(r.ok && r.value.fields).toMatchObject(fields);
  });

  it.each(['10', '+10', '-10G', '10GB', '+0G', '10g', '1e3G', ' +10G'])('refuses %j', (input) => {
    expect(parseResizeSize(input).ok).toBe(false);
  });

  it('computes the size after a resize from the size in the config', () => {
    const current = sizeBytes('3584M')!;
    expect(current).toBe(3584 * 1024 ** 2);
    const grow = parseResizeSize('+10G');
    expect(grow.ok && resizedBytes(grow.value, current)).toBe(current + 10 * 1024 ** 3);
    const to = parseResizeSize('2G');
    expect(to.ok && resizedBytes(to.value, current)).toBe(2 * 1024 ** 3);
    expect(sizeBytes('32')).toBe(32);
    expect(sizeBytes('32GB')).toBeNull();
  });
});

describe('volumeOwner', () => {
  it.each([
    ['local-lvm:vm-100-disk-0', 100],
    ['local-lvm:base-9000-disk-0/vm-106-disk-0', 106],
    ['local:100/vm-100-disk-0.qcow2', 100],
    ['local-lvm:subvol-110-disk-1', 110],
    ['local:iso/debian.iso', null],
  ])('%s belongs to %s', (volume, owner) => {
    expect(volumeOwner(volume)).toBe(owner);
  });
});
