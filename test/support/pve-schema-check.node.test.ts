// The request checker against the real PVE 9.1.3 schema: requests our Worker sends must pass,
// and each kind of mistake must come back as a problem naming the parameter.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  checkRequest,
  decodeFormLikePve,
  uncheckedFormats,
  uncheckedPatterns,
  type LoggedRequest,
} from './pve-schema-check.ts';
import { findSchemaFile, loadEndpoints, requireInCi, type EndpointDef } from './pve-schema-load.ts';

/** A temporary directory of this file's, removed when its tests are done. */
const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'pve-schema-'));
  temps.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
const WANTED = [
  'GET /cluster/resources',
  'GET /cluster/nextid',
  'POST /nodes/{node}/qemu',
  'GET /nodes/{node}/tasks/{upid}/status',
  'GET /version',
  'GET /nodes',
  'GET /nodes/{node}/qemu',
  'GET /nodes/{node}/lxc',
  'POST /nodes/{node}/qemu/{vmid}/agent/exec',
  'DELETE /nodes/{node}/storage/{storage}/content/{volume}',
];

const schemaFile = findSchemaFile(REPO_ROOT);
requireInCi(schemaFile, 'The PVE 9.1.3 API schema');
if (schemaFile === null) {
  console.warn(
    'pve-schema-check: PVE API schema not found (set PVE_API_SCHEMA, or put it in ' +
      '../shared/pve-api/); the schema conformance tests are SKIPPED.',
  );
}
const endpoints: EndpointDef[] = schemaFile ? loadEndpoints(schemaFile, WANTED) : [];

/** pve-common's own UPID decode vectors, saved next to the schema. */
const upidCases = (): { in: string; must_fail?: boolean }[] => {
  if (!schemaFile) return [];
  const file = path.join(path.dirname(schemaFile), 'fixtures/pve-common/upid-test-vectors.json');
  const vectors = JSON.parse(readFileSync(file, 'utf8')) as {
    decode_cases: { in: string; must_fail?: boolean }[];
  };
  return vectors.decode_cases;
};

// --- builders --------------------------------------------------------------------------------

const get = (p: string, query: Record<string, string> = {}): LoggedRequest => ({
  method: 'GET',
  path: `/api2/json${p}`,
  query,
  params: null,
});
const create = (params: Record<string, string>): LoggedRequest => ({
  method: 'POST',
  path: '/api2/json/nodes/pve1/qemu',
  query: {},
  params: { vmid: '101', ...params },
});
const taskStatus = (upid: string): LoggedRequest =>
  get(`/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`);
const check = (req: LoggedRequest): string[] => checkRequest(endpoints, req);

/** Everything the create tool can send, as its form parameters. */
const FULL_CREATE: Record<string, string> = {
  vmid: '101',
  name: 'web-01',
  memory: '2048',
  cores: '2',
  sockets: '1',
  net0: 'virtio,bridge=vmbr0,firewall=1',
  scsi0: 'local-lvm:32,iothread=1,discard=on',
  ide2: 'local:iso/debian-12.iso,media=cdrom',
  ostype: 'l26',
  cpu: 'host',
  scsihw: 'virtio-scsi-single',
  boot: 'order=scsi0;ide2;net0',
  agent: '1,fstrim_cloned_disks=1',
  tags: 'a;b',
  pool: 'prod',
  start: '0',
  description: 'Web server.\nOwner: ops\n\nCreated by the MCP server.',
};

const describeWithSchema = describe.skipIf(schemaFile === null);

describeWithSchema(`checkRequest against ${schemaFile ?? 'the PVE schema (not found)'}`, () => {
  describe('accepts', () => {
    it.each<[string, Record<string, string>]>([
      ['a full create', FULL_CREATE],
      ['a create with only vmid', {}],
      ['memory written as current=', { memory: 'current=2048' }],
      ['a NIC with its MAC as <model>=<mac>', { net0: 'virtio=BC:24:11:2A:3B:4C,tag=10' }],
      ['a NIC given as model= with a rate', { net0: 'model=e1000,bridge=vmbr1,rate=12.5' }],
      ['an empty CD drive', { ide2: 'none,media=cdrom' }],
      ['a passed-through disk by path', { scsi1: '/dev/disk/by-id/ata-X' }],
      [
        'a disk with vendor, product, wwn',
        { scsi0: 'local-lvm:8,vendor=ACME,product=Disk 1,wwn=0x5000c500a1b2c3d4' },
      ],
      ['a drive serial, urlencoded', { virtio0: 'local-lvm:8,serial=ABC%20123' }],
      ['a disk given a size', { sata0: 'local:100/vm-100-disk-0.qcow2,size=32G' }],
      ['a built-in CPU model with VM flags', { cpu: 'x86-64-v2-AES,flags=+aes;-pcid' }],
      [
        'a CPU with hidden and phys-bits',
        { cpu: 'cputype=host,hidden=1,phys-bits=host,guest-phys-bits=48' },
      ],
      ['legacy boot', { boot: 'cdn' }],
      ['boot from NIC, PCI and USB', { boot: 'order=net31;hostpci15;usb13' }],
      ['agent off', { agent: '0' }],
      ['agent with on/off and an alias', { agent: 'enabled=1,type=virtio,guest-fsfreeze=on' }],
      ['tags split on , ; and space', { tags: 'a,b c;prod-2.x+y' }],
      ['a nested pool', { pool: 'prod/web' }],
      ['the highest indexes', { net31: 'virtio', scsi30: 'local-lvm:1', usb13: 'spice' }],
      ['USB by id, port and spice', { usb0: 'spice', usb1: 'host=1234:abcd', usb2: '1-2.3' }],
      ['a startup order', { startup: 'order=1,up=30' }],
      [
        'cloud-init networking',
        { ipconfig0: 'ip=10.0.0.5/24,gw=10.0.0.1,ip6=auto', ipconfig1: 'ip=dhcp' },
      ],
      [
        'name servers and a CPU set',
        { nameserver: '1.1.1.1 2606:4700::1111 dns.example', affinity: '0-3,8' },
      ],
      [
        'hotplug, watchdog, rng and cicustom',
        {
          hotplug: 'network,disk,usb',
          watchdog: 'ib700,action=reset',
          rng0: 'source=/dev/urandom',
          cicustom: 'user=local:snippets/u.yaml',
        },
      ],
    ])('%s', (_name, params) => {
      expect(check(create(params))).toEqual([]);
    });

    it.each<[string, LoggedRequest]>([
      ['nextid without vmid', get('/cluster/nextid')],
      ['nextid with vmid', get('/cluster/nextid', { vmid: '100' })],
      ['resources of all types', get('/cluster/resources')],
      ['resources of type vm', get('/cluster/resources', { type: 'vm' })],
      ['the version', get('/version')],
      ['the node list', get('/nodes')],
      ['the qemu list with full=1', get('/nodes/pve1/qemu', { full: '1' })],
      ['the lxc list', get('/nodes/pve-2/lxc')],
      ['a path without /api2/json', { ...get('/nodes/pve1/qemu'), path: '/nodes/pve1/qemu' }],
    ])('%s', (_name, req) => {
      expect(check(req)).toEqual([]);
    });

    it.each(upidCases().filter((c) => !c.must_fail))('task status for $in', ({ in: upid }) => {
      expect(check(taskStatus(upid))).toEqual([]);
    });
  });

  describe('reports, naming the parameter', () => {
    it.each<[Record<string, string>, string]>([
      [{ foo: '1' }, 'foo: property is not defined in schema'],
      [{ start: 'true' }, "start: type check ('boolean') failed - got 'true'"],
      [{ vmid: '99' }, 'vmid: invalid format - value does not look like a valid VM ID'],
      [{ vmid: '1000000000' }, 'vmid: invalid format'],
      [{ ostype: 'linux' }, "ostype: value 'linux' does not have a value in the enumeration"],
      [{ scsihw: 'virtio' }, "scsihw: value 'virtio' does not have a value in the enumeration"],
      [{ cores: '0' }, 'cores: value must have a minimum value of 1'],
      [{ cores: 'two' }, "cores: type check ('integer') failed - got 'two'"],
      [{ memory: '8' }, 'memory.current: value must have a minimum value of 16'],
      [{ memory: '2G' }, "memory.current: type check ('integer') failed"],
      [{ name: 'web_01' }, 'name: invalid format - value does not look like a valid DNS name'],
      [
        { net0: 'virtio,bridge=vmbr0,speed=10' },
        'net0: invalid format - invalid key in comma-separated list property: speed',
      ],
      [
        { net0: 'virtio,bridge=vmbr0,bridge=vmbr1' },
        'net0: invalid format - duplicate key in comma-separated list property: bridge',
      ],
      [
        { net0: 'virtio,e1000' },
        'net0: invalid format - duplicate key in comma-separated list property: model',
      ],
      [
        { net0: 'virtio=BC:24:11:2A:3B:4C,model=e1000' },
        'net0: invalid format - duplicate key in comma-separated list property: model',
      ],
      [
        { net0: 'virtio=01:00:5E:00:00:01' },
        'net0.macaddr: invalid format - value does not look like a valid unicast MAC address',
      ],
      [{ net0: 'virtio,tag=5000' }, 'net0.tag: value must have a maximum value of 4094'],
      [{ net0: 'virtio,bridge=vmbr 0' }, "net0.bridge: invalid format - invalid bridge ID 'vmbr 0"],
      [{ net0: 'virtio,firewall=maybe' }, "net0.firewall: type check ('boolean') failed"],
      [{ net0: 'virtio,bridge=' }, 'net0: invalid format - missing key in comma-separated list'],
      [
        { ide2: 'debian-12.iso,media=cdrom' },
        "ide2.file: invalid format - unable to parse volume ID 'debian-12.iso'",
      ],
      [{ ide2: 'local:iso/debian-12.iso,media=dvd' }, "ide2.media: value 'dvd' does not have"],
      [{ scsi0: 'iothread=1' }, 'scsi0.file: property is missing and it is not optional'],
      [
        { scsi0: 'local-lvm:32,size=32X' },
        'scsi0.size: invalid format - value does not look like a valid disk size: 32X',
      ],
      [{ scsi0: 'local-lvm:32,discard=yes' }, "scsi0.discard: value 'yes' does not have a value"],
      [{ scsi0: 'local-lvm:8,vendor=ABCDEFGHIJ' }, 'scsi0.vendor: value does not match the regex'],
      [
        { virtio0: 'local-lvm:8,serial=a b' },
        'virtio0.serial: invalid format - invalid urlencoded string: a b',
      ],
      [{ tags: 'a;b!' }, 'tags: invalid format - invalid characters in tag'],
      [{ pool: 'a/b/c/d' }, "pool: invalid format - pool name 'a/b/c/d' nested too deeply"],
      [{ pool: 'prod pool' }, "pool: invalid format - pool name 'prod pool' contains invalid"],
      [{ cpu: 'pentium4' }, "cpu: invalid format - Built-in cputype 'pentium4' is not defined"],
      [{ cpu: 'host,flags=+avx' }, 'cpu: invalid format - VM-specific CPU flags must be a subset'],
      [{ cpu: 'host,reported-model=host' }, "cpu: invalid format - Property 'reported-model' not"],
      [{ cpu: 'hidden=1' }, 'cpu: invalid format - CPU is missing cputype'],
      [{ cpu: 'host,flags=+aes|+pcid' }, 'cpu.flags: value does not match the regex pattern'],
      [{ cpu: 'host,phys-bits=99' }, 'cpu.phys-bits: invalid format - value must be an integer'],
      [{ boot: 'order=scsi0;efidisk0' }, "boot.order: invalid format - invalid boot device 'efi"],
      [{ boot: 'order=scsi31' }, "boot.order: invalid format - invalid boot device 'scsi31'"],
      [{ boot: 'cdx' }, 'boot.legacy: value does not match the regex pattern'],
      // A bare default-key value skips parse_boolean, so agent=on is refused.
      [{ agent: 'on' }, "agent.enabled: type check ('boolean') failed - got 'on'"],
      [{ scsi31: 'local-lvm:1' }, 'scsi31: property is not defined in schema'],
      [{ net01: 'virtio' }, 'net01: property is not defined in schema'],
      [{ 'net[n]': 'virtio' }, 'net[n]: property is not defined in schema'],
      [{ force: '1' }, "archive: missing property - 'force' requires this property"],
      [{ description: 'x'.repeat(8193) }, 'description: value may only be 8192 characters long'],
      [{ startdate: 'tomorrow' }, 'startdate: value does not match the regex pattern'],
      [{ startup: 'order=first' }, 'startup: invalid format - unable to parse startup options'],
      [
        { ipconfig0: 'ip=10.0.0.5/33' },
        'ipconfig0.ip: invalid format - value does not look like a valid ipv4 network',
      ],
      [
        { ipconfig0: 'gw=10.0.0.1' },
        "ip: missing property - 'ipconfig0.gw' requires this property",
      ],
      [
        { nameserver: '1.1.1.1 not..valid' },
        'nameserver: invalid format - value does not look like a valid address',
      ],
      [{ affinity: '0-3,x' }, 'affinity: invalid format - unable to parse cpuset option'],
      [{ hotplug: 'disk,gpu' }, "hotplug: invalid format - invalid hotplug feature 'gpu'"],
      [
        { watchdog: 'i6300esb,action=explode' },
        "watchdog.action: value 'explode' does not have a value",
      ],
      [{ rng0: 'source=/dev/zero' }, "rng0.source: value '/dev/zero' does not have a value"],
      [
        { cicustom: 'user=snippets.yaml' },
        "cicustom.user: invalid format - unable to parse volume ID 'snippets.yaml'",
      ],
    ])('create with %j', (params, expected) => {
      expect(check(create(params)).join('\n')).toContain(expected);
    });

    it.each<[string, LoggedRequest, string]>([
      [
        'a create without vmid',
        { ...create({}), params: { name: 'web-01' } },
        'vmid: property is missing and it is not optional',
      ],
      [
        'an unknown parameter in the query of a POST',
        { ...create({}), query: { foo: '1' } },
        'foo: property is not defined in schema',
      ],
      [
        'a node path escaping with %2F',
        { ...create({}), path: '/api2/json/nodes/..%2Fx/qemu' },
        'endpoint: no checked endpoint matches POST /api2/json/nodes/..%2Fx/qemu',
      ],
      [
        'a bad node name',
        get('/nodes/pve_1/qemu'),
        'node: invalid format - value does not look like a valid node name',
      ],
      [
        'an unknown endpoint',
        { ...create({}), path: '/api2/json/nodes/pve1/qemu/101/status/start' },
        'endpoint: no checked endpoint matches POST',
      ],
      [
        'a method the path does not have',
        { ...create({}), method: 'DELETE' },
        'endpoint: DELETE is not defined for /nodes/{node}/qemu',
      ],
      [
        'a non-json API path',
        { ...get('/version'), path: '/api2/extjs/version' },
        "path: response format 'extjs' is not json",
      ],
      ['nextid with vmid 99', get('/cluster/nextid', { vmid: '99' }), 'vmid: invalid format'],
      [
        'resources of type qemu',
        get('/cluster/resources', { type: 'qemu' }),
        "type: value 'qemu' does not have a value in the enumeration 'vm, storage, node, sdn'",
      ],
      [
        'the qemu list with full=true',
        get('/nodes/pve1/qemu', { full: 'true' }),
        "full: type check ('boolean') failed",
      ],
      [
        'a GET with a body',
        { ...get('/version'), params: { x: '1' } },
        'body: GET requests must not carry a body',
      ],
      [
        'a task status with a truncated UPID',
        taskStatus('UPID:pve1:0000C346:165A0CE4:68D7279C:qmcreate:101:root@pam'),
        'upid: unable to parse worker upid',
      ],
    ])('%s', (_name, req, expected) => {
      expect(check(req).join('\n')).toContain(expected);
    });

    it.each(upidCases().filter((c) => c.must_fail))('task status for $in', ({ in: upid }) => {
      expect(check(taskStatus(upid))).not.toEqual([]);
    });
  });

  describe('indexed options', () => {
    const createProps = (): Record<string, { description?: string }> => {
      const post = endpoints.find((e) => e.method === 'POST');
      const params = post?.parameters as { properties: Record<string, { description?: string }> };
      return params.properties;
    };

    it('knows the index range of every [n] option', () => {
      const indexed = Object.keys(createProps()).filter((k) => k.endsWith('[n]'));
      expect(indexed.length).toBeGreaterThan(10);
      for (const key of indexed) {
        const problems = check(create({ [key.replace('[n]', '0')]: 'x' })).join('\n');
        expect(problems).not.toMatch(/index range|not defined in schema/);
      }
    });

    it('agrees with the ranges the descriptions state ("n is 0 to N")', () => {
      const stated = Object.entries(createProps()).flatMap(([key, schema]) => {
        const last = /\(n is 0 to (\d+)\)/.exec(schema.description ?? '')?.[1];
        return key.endsWith('[n]') && last ? [[key.replace('[n]', ''), Number(last)] as const] : [];
      });
      expect(stated.length).toBeGreaterThanOrEqual(6);
      for (const [name, last] of stated) {
        expect(check(create({ [`${name}${last}`]: 'x' })).join('\n')).not.toContain('not defined');
        expect(check(create({ [`${name}${last + 1}`]: 'x' })).join('\n')).toContain(
          `${name}${last + 1}: property is not defined`,
        );
      }
    });
  });

  describe('makes gaps visible', () => {
    it('reports a named format it does not implement', () => {
      expect(check(create({ smbios1: 'uuid=7dd0d2c6-7b1e-4bb7-9b33-1b8e5d1f2a10' }))).toEqual([
        'smbios1: format pve-qm-smbios1 not checked',
      ]);
    });

    it('reports a custom CPU model as not checked', () => {
      expect(check(create({ cpu: 'custom-fast' }))).toEqual([
        "cpu: custom CPU model 'custom-fast' not checked",
      ]);
    });

    it('lists exactly the unimplemented formats of these endpoints', () => {
      expect(uncheckedFormats(endpoints)).toEqual([
        'pve-qemu-sev-fmt',
        'pve-qemu-tdx-fmt',
        'pve-qm-hostpci',
        'pve-qm-smbios1',
      ]);
    });

    it('translates every pattern of these endpoints', () => {
      expect(uncheckedPatterns(endpoints)).toEqual([]);
    });
  });
});

describe('checkRequest on synthetic patterns', () => {
  const endpoint = (pattern: string): EndpointDef => ({
    method: 'GET',
    path: '/x',
    parameters: { additionalProperties: 0, properties: { v: { type: 'string', pattern } } },
  });
  const run = (pattern: string, v: string): string[] =>
    checkRequest([endpoint(pattern)], { method: 'GET', path: '/x', query: { v }, params: null });

  it.each([
    ['(?^:\\d+(?:-\\d+)?(?:;\\d+(?:-\\d+)?)*)', '10;20-30', true],
    ['(?^:\\d+(?:-\\d+)?(?:;\\d+(?:-\\d+)?)*)', '10,20', false],
    ['[A-Za-z0-9\\-_\\s]{,4}', 'ab 1', true],
    ['[A-Za-z0-9\\-_\\s]{,4}', 'abcde', false],
    ['(?^:^(0x)[0-9a-fA-F]{16})', '0x0123456789abcdef', true],
    ['(?^:^(0x)[0-9a-fA-F]{16})', '0x0123', false],
    // PVE anchors as m/^$pattern$/, so a top-level | leaves each side half-anchored.
    ['/dev/parport\\d+|/dev/usb/lp\\d+', '/dev/parport0', true],
    ['/dev/parport\\d+|/dev/usb/lp\\d+', '/dev/ttyS0', false],
  ])('pattern %s on %s passes: %s', (pattern, v, ok) => {
    expect(run(pattern, v).length === 0).toBe(ok);
  });

  it.each(['\\Aabc\\z', '(?^i:abc)', '(?>a+)b', 'a++', '[[:alpha:]]+', '\\p{L}+'])(
    'reports the untranslatable pattern %s instead of passing',
    (pattern) => {
      expect(run(pattern, 'abc')).toEqual([`v: pattern ${pattern} not checked`]);
      expect(uncheckedPatterns([endpoint(pattern)])).toEqual([`GET /x v: ${pattern}`]);
    },
  );
});

describe.skipIf(schemaFile === null)('array parameters and volume ids in paths', () => {
  const exec = (body: string): string[] =>
    check({
      method: 'POST',
      path: '/api2/json/nodes/pve1/qemu/100/agent/exec',
      query: {},
      params: decodeFormLikePve(body).params,
    });

  it('takes a repeated key as the list an array parameter wants, and a single one as a list of one', () => {
    expect(exec('command=echo&command=a+b')).toEqual([]);
    expect(exec('command=hostname')).toEqual([]);
  });

  it('refuses a repeated key for a parameter that is no list', () => {
    expect(check(create({ ...FULL_CREATE, tags: ['a', 'b'] as unknown as string }))).toEqual([
      'tags: sent more than once; PVE turns it into a list',
    ]);
  });

  it('reads the rest of the path below a storage content as one volume id', () => {
    const volid = 'local:backup/vzdump-qemu-100-2026_11_30-02_00_07.vma.zst';
    expect(
      check({
        method: 'DELETE',
        path: `/api2/json/nodes/pve1/storage/local/content/${encodeURIComponent(volid)}`,
        query: {},
        params: null,
      }),
    ).toEqual([]);
  });
});

describe('decodeFormLikePve', () => {
  it('gives back exactly what URLSearchParams encoded', () => {
    const { params, problems } = decodeFormLikePve(new URLSearchParams(FULL_CREATE).toString());
    expect(params).toEqual(FULL_CREATE);
    expect(problems).toEqual([]);
  });

  it('reports raw ; and = and empty values the way PVE reads them, and makes a repeated key a list', () => {
    const body = 'boot=order=scsi0;ide2&tags=a&tags=b&description=';
    const { params, problems } = decodeFormLikePve(body);
    expect(params).toEqual({ boot: 'order', tags: ['a', 'b'] });
    expect(problems).toEqual([
      "body: a raw ';' splits parameters for PVE; encode it",
      "boot: an unencoded '=' cuts the value short for PVE",
      'ide2: no value; PVE treats the parameter as absent',
      'description: no value; PVE treats the parameter as absent',
    ]);
  });
});

describe('loadEndpoints and findSchemaFile', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.skipIf(schemaFile === null)('returns small, JSON-serialisable definitions in order', () => {
    const text = JSON.stringify(endpoints);
    expect(JSON.parse(text)).toEqual(endpoints);
    expect(text.length).toBeLessThan(200_000);
    expect(endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(WANTED);
  });

  it.skipIf(schemaFile === null)('throws for an endpoint the schema lacks', () => {
    expect(() => loadEndpoints(schemaFile ?? '', ['GET /nodes/{node}/nope'])).toThrow(
      'defines no GET /nodes/{node}/nope',
    );
  });

  it('reads the apidata.js form too', () => {
    const file = path.join(tempDir(), 'apidata.js');
    const tree = [{ path: '/version', info: { GET: { parameters: { additionalProperties: 0 } } } }];
    writeFileSync(file, `const apiSchema = ${JSON.stringify(tree, null, 1)};\n`);
    expect(loadEndpoints(file, ['GET /version'])).toEqual([
      { method: 'GET', path: '/version', parameters: { additionalProperties: 0 } },
    ]);
  });

  it('honours PVE_API_SCHEMA, and refuses one that points nowhere', () => {
    const file = path.join(tempDir(), 'schema.json');
    writeFileSync(file, '[]');
    vi.stubEnv('PVE_API_SCHEMA', file);
    expect(findSchemaFile('/nonexistent/repo')).toBe(file);
    vi.stubEnv('PVE_API_SCHEMA', `${file}.missing`);
    expect(() => findSchemaFile(REPO_ROOT)).toThrow('PVE_API_SCHEMA');
  });

  it('finds nothing away from the shared folder, with no fixed fallback path', () => {
    vi.stubEnv('PVE_API_SCHEMA', '');
    expect(findSchemaFile('/nonexistent/repo')).toBeNull();
  });

  it('fails the run under CI when the schema is missing, and only warns elsewhere', () => {
    vi.stubEnv('CI', 'true');
    expect(() => requireInCi(null, 'The PVE 9.1.3 API schema')).toThrow(
      'The PVE 9.1.3 API schema was not found',
    );
    vi.stubEnv('CI', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(() => requireInCi(null, 'The PVE 9.1.3 API schema')).not.toThrow();
    expect(warn.mock.calls[0]?.[0]).toMatch(/SKIPPED/);
    warn.mockRestore();
  });
});
