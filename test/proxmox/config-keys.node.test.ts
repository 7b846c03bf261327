// Our table of guest config keys (src/proxmox/config-key-tables.ts) against the real PVE 9.1.3
// schema of PUT /nodes/{node}/{qemu,lxc}/{vmid}/config: every key Proxmox defines is either
// accepted (with a rule of the schema's type, within its bounds, with only keys its property
// string knows) or refused with a reason, and a sample value of each accepted key, parsed and
// sent as the tool sends it, passes Proxmox's own parameter check.

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_TABLES,
  acceptedKeys,
  parseConfigValue,
  sendConfigValue,
  type GuestKind,
} from '../../src/proxmox/config-keys';
import { LXC_INDEX_LIMITS, QEMU_INDEX_LIMITS, checkRequest } from '../support/pve-schema-check.ts';
import { findSchemaFile, loadEndpoints, requireInCi } from '../support/pve-schema-load.ts';

const schemaFile = findSchemaFile(path.resolve(import.meta.dirname, '../..'));
requireInCi(schemaFile, 'The PVE 9.1.3 API schema (the config key table is checked against it)');
const PATHS: Record<GuestKind, string> = {
  qemu: '/nodes/{node}/qemu/{vmid}/config',
  lxc: '/nodes/{node}/lxc/{vmid}/config',
};
const endpoints = schemaFile
  ? loadEndpoints(
      schemaFile,
      Object.values(PATHS).map((p) => `PUT ${p}`),
    )
  : [];

/** Parameters of the config endpoints that are not config keys. */
const API_PARAMS = ['node', 'vmid', 'delete', 'digest', 'revert', 'skiplock', 'force'];

type Schema = Record<string, unknown>;
function properties(kind: GuestKind): Record<string, Schema> {
  const def = endpoints.find((e) => e.path === PATHS[kind])!;
  return (def.parameters as { properties: Record<string, Schema> }).properties;
}

/** The keys of a property-string format: its object, or for a named format the typetext's `key=`. */
function formatKeys(schema: Schema): string[] | null {
  if (schema.format && typeof schema.format === 'object') return Object.keys(schema.format);
  const text = typeof schema.typetext === 'string' ? schema.typetext : '';
  const keys = [...text.matchAll(/([a-z][a-z0-9_-]*)=\]?</gi)].map((m) => m[1]!);
  return keys.length ? keys : null;
}

const SAMPLES: Record<GuestKind, Record<string, string | number | boolean>> = {
  qemu: {
    description: 'line 1\nline 2; & = +',
    tags: 'web;prod',
    onboot: true,
    protection: false,
    nameserver: '10.0.0.53 2001:db8::53',
    searchdomain: 'example.com lab.example.com',
    acpi: true,
    agent: '1,fstrim_cloned_disks=1',
    balloon: 1024,
    bios: 'ovmf',
    boot: 'order=scsi0;net0',
    cores: 4,
    cpu: 'host,flags=+aes',
    cpulimit: 1.5,
    cpuunits: 200,
    localtime: false,
    memory: 4096,
    name: 'web-01.example.com',
    numa: true,
    ostype: 'l26',
    scsihw: 'virtio-scsi-single',
    shares: 1000,
    sockets: 2,
    tablet: false,
    vcpus: 2,
    ciuser: 'debian',
    cipassword: 'correct horse',
    citype: 'nocloud',
    ciupgrade: false,
    sshkeys:
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== c',
    ipconfig0: 'ip=10.0.0.5/24,gw=10.0.0.1,ip6=auto',
    ipconfig31: 'ip=dhcp',
    net0: 'virtio,bridge=vmbr0,tag=20,firewall=1',
    net31: 'e1000=BC:24:11:00:00:01,bridge=vmbr1',
    scsi1: 'local-lvm:32,iothread=1,discard=on,ssd=1',
    scsi30: 'local-lvm:vm-100-disk-5,backup=0',
    virtio0: 'local-lvm:16,iothread=1',
    virtio15: 'local-lvm:8,ro=1',
    sata0: 'local-lvm:8,ssd=1',
    sata5: 'local-lvm:8',
    ide0: 'local-lvm:4',
    ide2: 'local:iso/debian-13.iso',
    ide3: 'none,media=cdrom',
  },
  lxc: {
    description: 'notes',
    tags: 'infra',
    onboot: false,
    protection: true,
    nameserver: '10.0.0.53',
    searchdomain: 'example.com',
    cmode: 'console',
    console: true,
    cores: 2,
    cpulimit: 2,
    cpuunits: 100,
    hostname: 'dns01.example.com',
    memory: 1024,
    swap: 512,
    ostype: 'debian',
    tty: 2,
    net0: 'name=eth0,bridge=vmbr0,ip=10.0.0.9/24,gw=10.0.0.1,ip6=auto,firewall=1,tag=5,type=veth',
    net31:
      'name=eth31,bridge=vmbr1,ip=dhcp,mtu=9000,rate=10,trunks=10;20,hwaddr=BC:24:11:00:00:02,link_down=0,host-managed=0',
    rootfs:
      'local-lvm:vm-110-disk-0,size=8G,acl=1,mountoptions=noatime;nodev,quota=0,replicate=1,ro=0,shared=0',
    mp0: 'local-lvm:16,mp=/srv/data,backup=1,keepattrs=1',
    mp255: 'ceph-pool:vm-110-disk-9,mp=/var/lib/app,ro=1',
  },
};

describe.skipIf(!schemaFile).each(['qemu', 'lxc'] as const)('the %s config key table', (kind) => {
  const table = CONFIG_TABLES[kind];
  const limits = kind === 'qemu' ? QEMU_INDEX_LIMITS : LXC_INDEX_LIMITS;

  it('names every key Proxmox defines, accepted or refused, and no key it does not', () => {
    const defined = Object.keys(properties(kind))
      .filter((k) => !API_PARAMS.includes(k))
      .sort();
    const ours = [...Object.keys(table.accepted), ...Object.keys(table.refused)].sort();
    expect(ours).toEqual(defined);
    expect(Object.keys(table.accepted).filter((k) => k in table.refused)).toEqual([]);
  });

  it('gives every refused key a reason', () => {
    for (const reason of Object.values(table.refused)) expect(reason.length).toBeGreaterThan(10);
  });

  it('uses the index ranges of PVE 9.1', () => {
    for (const [name, count] of Object.entries(table.counts))
      expect([name, count]).toEqual([name, limits[name]]);
    const indexed = [...Object.keys(table.accepted), ...Object.keys(table.refused)]
      .filter((k) => k.endsWith('[n]'))
      .map((k) => k.slice(0, -3));
    expect(Object.keys(table.counts).sort()).toEqual(indexed.sort());
  });

  it("gives each accepted key a rule of the schema's type, within its bounds", () => {
    const props = properties(kind);
    for (const [key, rule] of Object.entries(table.accepted)) {
      const schema = props[key]!;
      const at = `${kind} ${key}`;
      if (rule.kind === 'boolean') expect(schema.type, at).toBe('boolean');
      if (rule.kind === 'integer' || rule.kind === 'number') {
        // memory is a property string `[current=]<integer>` whose bare integer we send.
        expect(key === 'memory' && kind === 'qemu' ? 'integer' : schema.type, at).toBe(rule.kind);
        if (schema.minimum !== undefined)
          expect(rule.min, at).toBeGreaterThanOrEqual(Number(schema.minimum));
        if (schema.maximum !== undefined)
          expect(rule.max, at).toBeLessThanOrEqual(Number(schema.maximum));
      }
      if (rule.kind === 'enum') for (const v of rule.values) expect(schema.enum, at).toContain(v);
      if (rule.kind === 'text' || rule.kind === 'enum') expect(schema.type, at).toBe('string');
      if (rule.kind === 'property') {
        const keys = formatKeys(schema);
        expect(keys, `${at} is a property string`).not.toBeNull();
        const own = rule.fields.filter(
          (f) =>
            !['storage', 'size_gib', 'new_disk', 'iso'].includes(f) &&
            !(f === 'volume' && !keys!.includes('volume')),
        );
        expect(
          own.filter((f) => !keys!.includes(f)),
          at,
        ).toEqual([]);
      }
    }
  });

  it('has a sample for every accepted key, and each is valid for Proxmox as the tool sends it', () => {
    const samples = SAMPLES[kind];
    const covered = new Set(
      Object.keys(samples).map((k) => {
        const m = /^([a-z]+)\d+$/.exec(k);
        return m && table.counts[m[1]!] !== undefined ? `${m[1]}[n]` : k;
      }),
    );
    for (const key of Object.keys(table.accepted)) expect(covered.has(key), key).toBe(true);
    const params: Record<string, string> = {};
    for (const [key, raw] of Object.entries(samples)) {
      const parsed = parseConfigValue(kind, key, raw);
      expect(parsed, `${key}: ${JSON.stringify(parsed)}`).toMatchObject({ ok: true });
      if (parsed.ok) params[key] = sendConfigValue(kind, key, parsed.value);
    }
    const problems = checkRequest(endpoints, {
      method: 'PUT',
      path: `/nodes/pve1/${kind}/100/config`,
      query: {},
      params,
    });
    expect(problems).toEqual([]);
  });

  it('expands indexed keys to exactly the names Proxmox has', () => {
    const keys = acceptedKeys(kind);
    expect(keys).toContain('net31');
    expect(keys).not.toContain('net32');
    expect(parseConfigValue(kind, 'net32', 'x')).toEqual({
      ok: false,
      error: `not a config option of ${kind === 'qemu' ? 'a VM' : 'a container'}`,
    });
    expect(parseConfigValue(kind, 'net01', 'x')).toMatchObject({ ok: false });
  });
});
