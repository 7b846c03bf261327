// Named string formats (pve-common, qemu-server, pve-access-control `register_format` code
// validators). Each throws a PveDie with PVE's own text; schema-check prefixes "invalid format - ".
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { PveDie } from './schema-types.ts';

type FormatCheck = (value: string) => void;

const LABEL = '([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)';
const DNS_NAME_RE = new RegExp(`^(${LABEL}\\.)*${LABEL}$`);
const DRIVE_RANGES: Readonly<Record<string, number>> = { ide: 4, sata: 6, scsi: 31, virtio: 16 };

/** qemu-server is_valid_drivename: ide0-3, sata0-5, scsi0-30, virtio0-15, efidisk0, tpmstate0. */
export function isValidDriveName(name: string): boolean {
  if (name === 'efidisk0' || name === 'tpmstate0') return true;
  const match = /^(ide|sata|scsi|virtio)(\d+)$/.exec(name);
  if (!match) return false;
  const index = Number(match[2]);
  return String(index) === match[2] && index < (DRIVE_RANGES[match[1] ?? ''] ?? 0);
}

/** PVE::Tools::split_list: NUL-separated, or split on `,`, `;` and whitespace. */
export function splitList(text: string): string[] {
  if (text.includes('\0')) return text.split('\0');
  const spaced = text.replace(/[,;]/g, ' ').replace(/^\s+/, '');
  return spaced.split(/\s+/).filter((part) => part !== '');
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new PveDie(`${message}\n`);
}

function parseStorageId(id: string): void {
  check(id.length >= 2, `storage ID '${id}' cannot be shorter than 2 characters`);
  check(/^[a-z][a-z0-9\-_.]*[a-z0-9]$/i.test(id), `storage ID '${id}' contains illegal characters`);
}

function parseVolumeId(volid: string): void {
  check(/^([a-z][a-z0-9\-_.]*[a-z0-9]):(.+)$/i.test(volid), `unable to parse volume ID '${volid}'`);
}

function checkCidr(value: string, family: 4 | 6): boolean {
  const match = /^(.*)\/(\d+)$/.exec(value);
  if (!match) return false;
  const bits = Number(match[2]);
  return isIP(match[1] ?? '') === family && bits > 7 && bits <= (family === 4 ? 32 : 128);
}

function checkBootDevice(dev: string): void {
  const special = dev.startsWith('efidisk') || dev.startsWith('tpmstate');
  if (isValidDriveName(dev) && !special) return;
  const indexed = /^(net|usb|hostpci)(\d+)$/.exec(dev);
  const limits: Readonly<Record<string, number>> = { net: 32, usb: 14, hostpci: 16 };
  const ok = indexed !== null && Number(indexed[2]) < (limits[indexed[1] ?? ''] ?? 0);
  check(ok && String(Number(indexed?.[2])) === indexed?.[2], `invalid boot device '${dev}'`);
}

function checkCpuset(text: string): void {
  const ok = text.split(',').every((part) => /^\d+(-\d+)?$/.test(part.trim()));
  check(ok && text.trim() !== '', 'unable to parse cpuset option');
}

function checkStartupOrder(value: string): void {
  const parts = value.split(',').filter((part) => !/^\s*$/.test(part));
  const known = parts.every((p) => /^((order=)?\d+|up=\d+|down=\d+)$/.test(p));
  const ok = value !== '' && value !== '0' && known;
  check(ok, 'unable to parse startup options');
}

function checkHotplug(value: string): void {
  if (value === '0' || value === '1') return;
  for (const feature of splitList(value)) {
    const known = /^(network|disk|cpu|memory|usb|cloudinit)$/.test(feature);
    check(known, `invalid hotplug feature '${feature}'`);
  }
}

function checkPoolId(name: string): void {
  check(name.split('/').length <= 3, `pool name '${name}' nested too deeply (max levels = 3)`);
  const valid = /^[A-Za-z0-9.\-_]+(?:\/[A-Za-z0-9.\-_]+){0,2}$/.test(name);
  check(valid, `pool name '${name}' contains invalid characters`);
}

function checkPhysBits(text: string): void {
  const inRange = text === 'host' || (Number(text) >= 8 && Number(text) <= 64);
  const ok = /^(host|\d{1,2})$/.test(text) && inRange;
  check(ok, "value must be an integer between 8 and 64 or 'host'");
}

export const CODE_FORMATS: Readonly<Record<string, FormatCheck>> = {
  string: () => {},
  'pve-vmid': (v) => check(/^[1-9][0-9]{2,8}$/.test(v), 'value does not look like a valid VM ID'),
  'pve-node': (v) =>
    check(
      /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)$/.test(v),
      'value does not look like a valid node name',
    ),
  'dns-name': (v) => check(DNS_NAME_RE.test(v), 'value does not look like a valid DNS name'),
  'pve-tag': (v) => check(/^[a-z0-9_][a-z0-9_\-+.]*$/i.test(v), 'invalid characters in tag'),
  'pve-poolid': checkPoolId,
  'pve-configid': (v) => check(/^[a-z][a-z0-9_-]+$/i.test(v), `invalid configuration ID '${v}'`),
  'mac-addr': (v) =>
    check(
      /^[a-f0-9][02468ace](?::[a-f0-9]{2}){5}$/i.test(v),
      'value does not look like a valid unicast MAC address',
    ),
  'pve-bridge-id': (v) => check(/^[-_.\w\d]+$/.test(v), `invalid bridge ID '${v}'`),
  'pve-storage-id': parseStorageId,
  'pve-volume-id': parseVolumeId,
  'pve-volume-id-or-absolute-path': (v) => (v.startsWith('/') ? undefined : parseVolumeId(v)),
  'pve-volume-id-or-qm-path': (v) =>
    v === 'none' || v === 'cdrom' || v.startsWith('/') ? undefined : parseVolumeId(v),
  urlencoded: (v) => check(/^[-%a-zA-Z0-9_.!~*'()]*$/.test(v), `invalid urlencoded string: ${v}`),
  'disk-size': (v) =>
    check(
      /^(\d+(\.\d+)?)([KMGT](?:iB)?)?$/.test(v),
      `value does not look like a valid disk size: ${v}`,
    ),
  ipv4: (v) => check(isIPv4(v), 'value does not look like a valid IPv4 address'),
  ipv6: (v) => check(isIPv6(v), 'value does not look like a valid IPv6 address'),
  address: (v) =>
    check(isIP(v) !== 0 || DNS_NAME_RE.test(v), `value does not look like a valid address: ${v}`),
  'pve-ipv4-config': (v) =>
    check(
      /^(?:dhcp|manual)$/.test(v) || checkCidr(v, 4),
      'value does not look like a valid ipv4 network configuration',
    ),
  'pve-ipv6-config': (v) =>
    check(
      /^(?:auto|dhcp|manual)$/.test(v) || checkCidr(v, 6),
      'value does not look like a valid ipv6 network configuration',
    ),
  'pve-startup-order': checkStartupOrder,
  'pve-cpuset': checkCpuset,
  'pve-hotplug-features': checkHotplug,
  'pve-qm-bootdisk': (v) => check(isValidDriveName(v), `invalid boot disk '${v}'`),
  'pve-qm-bootdev': checkBootDevice,
  'pve-phys-bits': checkPhysBits,
};
