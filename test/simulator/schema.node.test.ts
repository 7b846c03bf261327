// Unit tests of the simulator's PVE-compatible decoding and validation (no HTTP).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findReferenceFile, requireInCi } from '../support/pve-schema-load.ts';
import { describe, expect, it } from 'vitest';
import { decodeUrlencoded } from '../../simulator/http/form-decode.ts';
import {
  QEMU_CREATE_PARAM_NAMES,
  QEMU_CREATE_SCHEMA,
} from '../../simulator/schema/qemu-create-schema.ts';
import { NET_FORMAT } from '../../simulator/schema/qemu-device-formats.ts';
import { parsePropertyString, validateParams } from '../../simulator/schema/schema-check.ts';
import { decodeUpid, encodeUpid } from '../../simulator/cluster/upid.ts';

describe('decodeUrlencoded (AnyEvent.pm decode_urlencoded)', () => {
  it.each([
    ['tags=a%3Bb', { tags: 'a;b' }],
    ['tags=a;b', { tags: 'a', b: null }],
    ['boot=order=scsi0;ide2', { boot: 'order', ide2: null }],
    ['name=a+b&x=%41', { name: 'a b', x: 'A' }],
    ['a=1&a=2', { a: ['1', '2'] }],
    ['empty=&flag', { empty: null, flag: null }],
    ['a==b', { a: '' }],
    ['n=%C3%A9', { n: 'é' }],
    ['', {}],
    ['0', {}],
  ])('decodes %j', (input, expected) => {
    expect({ ...decodeUrlencoded(input) }).toEqual(expected);
  });
});

const create = (params: Record<string, unknown>) =>
  validateParams(QEMU_CREATE_SCHEMA, { node: 'pve1', vmid: '150', ...params } as never);

describe('validateParams for POST /nodes/{node}/qemu', () => {
  it.each([
    [{ vmid: '99' }, 'vmid', 'invalid format - value does not look like a valid VM ID\n'],
    [{ vmid: 'x' }, 'vmid', "type check ('integer') failed - got 'x'"],
    [{ vmid: undefined }, 'vmid', 'property is missing and it is not optional'],
    [{ cores: '0' }, 'cores', 'value must have a minimum value of 1'],
    [{ cpulimit: '129' }, 'cpulimit', 'value must have a maximum value of 128'],
    [{ start: 'true' }, 'start', "type check ('boolean') failed - got 'true'"],
    [
      { foo: '1' },
      'foo',
      'property is not defined in schema and the schema does not allow additional properties',
    ],
    [{ name: 'a_b' }, 'name', 'invalid format - value does not look like a valid DNS name\n'],
    [{ tags: 'ok;Bad!' }, 'tags', 'invalid format - invalid characters in tag\n'],
    [{ description: 'x'.repeat(8193) }, 'description', 'value may only be 8192 characters long'],
    [
      { memory: '8' },
      'memory',
      'invalid format - format error\nmemory.current: value must have a minimum value of 16\n',
    ],
    [
      { net0: 'virtio,foo=1' },
      'net0',
      'invalid format - invalid key in comma-separated list property: foo\n',
    ],
    [
      { net0: 'bridge=vmbr0' },
      'net0',
      'invalid format - format error\nnet0.model: property is missing and it is not optional\n',
    ],
    [
      { net0: 'virtio,tag=5000' },
      'net0',
      'invalid format - format error\nnet0.tag: value must have a maximum value of 4094\n',
    ],
    [
      { scsi0: 'local-lvm:32,ssd=maybe' },
      'scsi0',
      "invalid format - format error\nscsi0.ssd: type check ('boolean') failed - got 'maybe'\n",
    ],
    [
      { scsi0: 'local-lvm:32,cache=fast' },
      'scsi0',
      expect.stringContaining("scsi0.cache: value 'fast' does not have a value in the enumeration"),
    ],
    [{ agent: '1,type=usb' }, 'agent', expect.stringContaining("agent.type: value 'usb'")],
    [{ cpu: 'flags=+aes' }, 'cpu', 'invalid format - CPU is missing cputype\n'],
    [
      { boot: 'order=scsi0;bogus0' },
      'boot',
      "invalid format - format error\nboot.order: invalid format - invalid boot device 'bogus0'\n\n",
    ],
    [{ force: '1' }, 'archive', "missing property required by 'force'"],
    [
      { machine: 'pc-q36' },
      'machine',
      'invalid format - format error\nmachine.type: value does not match the regex pattern\n',
    ],
    [
      { usb0: 'host=usb-stick' },
      'usb0',
      'invalid format - format error\nusb0.host: value does not match the regex pattern\n',
    ],
    [
      { ostype: 'linux' },
      'ostype',
      "value 'linux' does not have a value in the enumeration 'other, wxp, w2k, w2k3, w2k8, wvista, win7, win8, win10, win11, l24, l26, solaris'",
    ],
  ])('reports %j', (params, key, message) => {
    expect(create(params)).toEqual({ [key]: message });
  });

  it('accepts a typical create request, property-string booleans as on/off', () => {
    const ok = create({
      name: 'web03.example.com',
      memory: 'current=2048',
      cores: '2',
      sockets: '1',
      cpu: 'x86-64-v2-AES,flags=+aes',
      scsi0: 'local-lvm:32,iothread=on,discard=on,ssd=yes',
      ide2: 'local:iso/debian.iso,media=cdrom',
      net0: 'virtio=BC:24:11:2A:3B:4C,bridge=vmbr0,firewall=1,tag=10',
      agent: 'enabled=1,fstrim_cloned_disks=1',
      boot: 'order=scsi0;ide2;net0',
      tags: 'prod,Web;x',
      start: '1',
      ipconfig0: 'ip=10.0.0.5/24,gw=10.0.0.1',
      machine: 'pc-i440fx-9.2+pve1',
      usb0: 'spice,usb3=1',
      vga: 'qxl,memory=32',
      efidisk0: 'local-lvm:1,efitype=4m,pre-enrolled-keys=1',
    });
    expect(ok).toEqual({});
  });

  it('reports every invalid parameter at once', () => {
    expect(Object.keys(create({ cores: '0', sockets: 'x', bogus: '1' })).sort()).toEqual([
      'bogus',
      'cores',
      'sockets',
    ]);
  });

  it('accepts JSON booleans but not for string parameters', () => {
    expect(create({ start: true, vmid: 150 })).toEqual({});
    expect(create({ name: true })).toEqual({
      name: "type check ('string') failed - got JSON::PP::Boolean",
    });
  });
});

describe('parsePropertyString', () => {
  it('maps the <model>=<macaddr> shorthand to model and macaddr', () => {
    expect({
      ...parsePropertyString(NET_FORMAT, 'e1000=BC:24:11:00:00:01,bridge=vmbr1', 'net0'),
    }).toEqual({
      model: 'e1000',
      macaddr: 'BC:24:11:00:00:01',
      bridge: 'vmbr1',
    });
  });

  it.each([
    ['virtio,model=e1000', 'duplicate key in comma-separated list property: model\n'],
    ['virtio,bridge=a,bridge=b', 'duplicate key in comma-separated list property: bridge\n'],
    ['virtio,firewall=', 'missing key in comma-separated list property\n'],
  ])('rejects %s', (value, message) => {
    expect(() => parsePropertyString(NET_FORMAT, value, 'net0')).toThrow(message);
  });
});

describe('UPID (pve-common test vectors)', () => {
  it('decodes token-user and 9-digit pstart UPIDs', () => {
    expect(
      decodeUpid('UPID:example-node:000934AF:FFFFFFFFF:68BF3A41:fake-but-valid-type:100:root@pam:'),
    ).toMatchObject({
      pid: 603311,
      pstart: 68719476735,
      starttime: 1757362753,
    });
    expect(
      decodeUpid('UPID:example-node:000934AF:0D015579:68BF3A41:vzdump:100:91a1da29@pam!some-token:')
        ?.user,
    ).toBe('91a1da29@pam!some-token');
    expect(
      decodeUpid('UPID:example-node:000934AF:0D015579:68BF3A41:broken type string:100:root@pam:'),
    ).toBeUndefined();
  });

  it('encodes with upper-case, zero-padded hex', () => {
    const parts = {
      node: 'pve1',
      pid: 49990,
      pstart: 375000292,
      starttime: 1758930844,
      type: 'qmcreate',
      id: '106',
      user: 'root@pam!mcp',
    };
    expect(encodeUpid(parts)).toBe(
      'UPID:pve1:0000C346:165A0CE4:68D7279C:qmcreate:106:root@pam!mcp:',
    );
  });
});

const SHARED_SCHEMA = findReferenceFile(
  path.resolve(import.meta.dirname, '../..'),
  'endpoints-9.1.3.json',
);
requireInCi(SHARED_SCHEMA, 'endpoints-9.1.3.json (PVE 9.1.3 reference data)');

describe.skipIf(SHARED_SCHEMA === null)('conformance with the PVE 9.1.3 schema', () => {
  it('accepts exactly the parameter names of POST /nodes/{node}/qemu', () => {
    const table = JSON.parse(readFileSync(SHARED_SCHEMA!, 'utf8')) as {
      qemu_create_param_table: { name: string }[];
    };
    expect(QEMU_CREATE_PARAM_NAMES).toEqual(
      table.qemu_create_param_table.map((row) => row.name).sort(),
    );
  });
});
