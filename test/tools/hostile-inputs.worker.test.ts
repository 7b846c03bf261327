// Bad input gets a clear error and changes nothing: every row carries confirm: true, yet no
// write may reach Proxmox, and the error must name the offending field.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, connect, ORIGIN, text, workerFetch } from '../support/worker/mcp';
import { CONFIG_TABLES } from '../../src/proxmox/config-keys';
import { TOOL_CATALOG } from '../../src/tools/index';
import {
  CONFIG_PROPERTY_VALUES,
  guestWriteCases,
  MEMBER_CASES,
  OPS_CASES,
  rowsPerTool,
  type MemberRow,
} from '../support/worker/hostile-cases';
import { sim } from '../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const ok = { node: 'pve1', confirm: true };
const huge = 'a'.repeat(100_000);

/** `{a: {a: ... }}`, `depth` levels. */
function nested(depth: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const CREATE_CASES: [label: string, args: Record<string, unknown>, field: string][] = [
  ['node missing', { confirm: true }, 'node'],
  ['node as a number', { ...ok, node: 1 }, 'node'],
  ['node path traversal', { ...ok, node: '../../access/users' }, 'node'],
  ['node with a slash', { ...ok, node: 'pve1/qemu/100' }, 'node'],
  ['node percent-encoded slash', { ...ok, node: 'pve1%2F..' }, 'node'],
  ['node with a query', { ...ok, node: 'pve1?x=1' }, 'node'],
  ['node with a newline', { ...ok, node: 'pve1\nX-Evil: 1' }, 'node'],
  ['node named localhost', { ...ok, node: 'localhost' }, 'node'],
  ['node named LOCALHOST', { ...ok, node: 'LOCALHOST' }, 'node'],
  ['node too long', { ...ok, node: 'n'.repeat(64) }, 'node'],
  ['vmid below range', { ...ok, vmid: 99 }, 'vmid'],
  ['vmid above range', { ...ok, vmid: 1_000_000_000 }, 'vmid'],
  ['vmid fractional', { ...ok, vmid: 100.5 }, 'vmid'],
  ['vmid as string', { ...ok, vmid: '100' }, 'vmid'],
  ['name not a DNS name', { ...ok, name: 'web_01' }, 'name'],
  ['name smuggling a parameter', { ...ok, name: 'x&start=1' }, 'name'],
  ['memory below 16', { ...ok, memory: 8 }, 'memory'],
  ['memory negative', { ...ok, memory: -1 }, 'memory'],
  ['memory as a property string', { ...ok, memory: '2048,hotplug=1' }, 'memory'],
  ['cores zero', { ...ok, cores: 0 }, 'cores'],
  ['sockets absurd', { ...ok, sockets: 10_000 }, 'sockets'],
  ['unknown argument', { ...ok, args: '-drive file=/dev/sda' }, 'args'],
  ['unknown argument hookscript', { ...ok, hookscript: 'local:snippets/x.sh' }, 'hookscript'],
  ['ostype not in the enum', { ...ok, ostype: 'linux' }, 'ostype'],
  ['scsihw not in the enum', { ...ok, scsihw: 'virtio' }, 'scsihw'],
  [
    'net0 smuggling a key with a comma',
    { ...ok, net0: 'virtio,bridge=vmbr0,tag=5,link_down=0,foo=bar' },
    'net0',
  ],
  ['net0 smuggling a parameter with &', { ...ok, net0: 'virtio,bridge=vmbr0&args=-x' }, 'net0'],
  ['net0 smuggling with ;', { ...ok, net0: 'virtio,bridge=vmbr0;args=-x' }, 'net0'],
  ['net0 with a newline', { ...ok, net0: 'virtio,bridge=vmbr0\nstart=1' }, 'net0'],
  ['net0 with = inside a value', { ...ok, net0: 'virtio,bridge=vmbr0=x' }, 'net0'],
  ['net0 duplicate key', { ...ok, net0: 'virtio,bridge=vmbr0,bridge=vmbr1' }, 'net0'],
  ['net0 model unknown', { ...ok, net0: 'rtl9999,bridge=vmbr0' }, 'net0'],
  ['net0 VLAN out of range', { ...ok, net0: 'virtio,bridge=vmbr0,tag=4095' }, 'net0'],
  ['net0 multicast MAC', { ...ok, net0: 'virtio=01:00:5E:00:00:01,bridge=vmbr0' }, 'net0'],
  ['net0 missing model', { ...ok, net0: 'bridge=vmbr0' }, 'net0'],
  ['scsi0 absolute host path', { ...ok, scsi0: '/dev/sda' }, 'scsi0'],
  [
    'scsi0 path traversal in volume',
    { ...ok, scsi0: 'local:../../etc/pve/priv/token.cfg' },
    'scsi0',
  ],
  [
    'scsi0 smuggling import-from a host path',
    { ...ok, scsi0: 'local-lvm:0,import-from=/etc/shadow' },
    'scsi0',
  ],
  ['scsi0 unknown key', { ...ok, scsi0: 'local-lvm:32,foo=1' }, 'scsi0'],
  ['scsi0 IDE-only key', { ...ok, scsi0: 'local-lvm:32,model=x' }, 'scsi0'],
  ['scsi0 boolean as word', { ...ok, scsi0: 'local-lvm:32,iothread=maybe' }, 'scsi0'],
  ['scsi0 stray comma', { ...ok, scsi0: 'local-lvm:32,,ssd=1' }, 'scsi0'],
  ['ide2 ISO as a disk', { ...ok, ide2: 'local:iso/x.iso,media=disk' }, 'ide2'],
  ['ide2 SCSI-only key', { ...ok, ide2: 'local:iso/x.iso,iothread=1' }, 'ide2'],
  ["ide2 attaching another VM's disk", { ...ok, ide2: 'local-lvm:vm-100-disk-0' }, 'ide2'],
  ['ide2 allocating a disk', { ...ok, ide2: 'local-lvm:4000' }, 'ide2'],
  [
    'ide2 importing a disk',
    { ...ok, ide2: 'local-lvm:0,import-from=local-lvm:vm-100-disk-0' },
    'ide2',
  ],
  ['cpu flag not allowed per VM', { ...ok, cpu: 'host,flags=+vmx' }, 'cpu'],
  ['cpu smuggling args', { ...ok, cpu: 'host,args=-enable-kvm' }, 'cpu'],
  ['boot legacy form', { ...ok, boot: 'cdn' }, 'boot'],
  ['boot unknown device', { ...ok, boot: 'order=scsi0;cdrom;net0' }, 'boot'],
  ['agent not a boolean', { ...ok, agent: 'sometimes' }, 'agent'],
  ['agent unknown key', { ...ok, agent: '1,exec=rm' }, 'agent'],
  ['tags with a space inside a tag list item', { ...ok, tags: ['ok', 'not ok'] }, 'tags'],
  ['tags with a semicolon smuggle', { ...ok, tags: 'a;b&start=1' }, 'tags'],
  ['pool with spaces', { ...ok, pool: 'my pool' }, 'pool'],
  ['start as a string', { ...ok, start: 'true' }, 'start'],
  ['description too long', { ...ok, description: 'd'.repeat(8193) }, 'description'],
  [
    'description with control characters',
    { ...ok, description: 'ok\u0000\u001b[2J' },
    'description',
  ],
  ['huge name', { ...ok, name: huge }, 'name'],
  ['huge net0', { ...ok, net0: huge }, 'net0'],
  ['timeout_s above 120', { ...ok, wait: true, timeout_s: 600 }, 'timeout_s'],
  ['confirm as a string', { node: 'pve1', confirm: 'yes' }, 'confirm'],
  ['arguments as an array element', { ...ok, net0: ['virtio'] }, 'net0'],
  ['null node', { ...ok, node: null }, 'node'],
  ['an argument nested 40 deep', { ...ok, net0: nested(40) }, 'net0'],
  ['an unknown argument nested 40 deep', { ...ok, extra: nested(40) }, 'extra'],
  [
    'approval_id not one (its format is checked, though not published)',
    { ...ok, approval_id: 'x&confirm=1' },
    'approval_id',
  ],
  ['approval_id too long', { ...ok, approval_id: 'a'.repeat(65) }, 'approval_id'],
];

const LIST_CASES: [label: string, args: Record<string, unknown>, field: string][] = [
  ['limit zero', { limit: 0 }, 'limit'],
  ['limit above 1000', { limit: 1001 }, 'limit'],
  ['type not qemu/lxc', { type: 'openvz' }, 'type'],
  ['node traversal', { node: '..' }, 'node'],
  ['unknown filter', { pool: 'x' }, 'pool'],
  ['tag with a slash', { tag: 'a/b' }, 'tag'],
  ['name nested 40 deep', { name: nested(40) }, 'name'],
];

const SNAP = { snapname: 'ok_name' };
const WRITE_CASES: [string, string, Record<string, unknown>, string][] = [
  ...['pve_start_vm', 'pve_stop_vm', 'pve_reboot_vm', 'pve_suspend_vm', 'pve_resume_vm'].flatMap(
    (t) => guestWriteCases(t, {}),
  ),
  ...guestWriteCases('pve_shutdown_vm', {}),
  [
    'pve_shutdown_vm',
    'timeout negative',
    { node: 'pve1', vmid: 100, timeout: -1, confirm: true },
    'timeout',
  ],
  [
    'pve_shutdown_vm',
    'force_stop as a string',
    { node: 'pve1', vmid: 100, force_stop: 'true', confirm: true },
    'force_stop',
  ],
  ...['pve_create_snapshot', 'pve_delete_snapshot', 'pve_rollback_snapshot'].flatMap(
    (t) =>
      [
        ...guestWriteCases(t, SNAP),
        [
          t,
          'snapname path traversal',
          { node: 'pve1', vmid: 100, snapname: '../../../qemu/101', confirm: true },
          'snapname',
        ],
        [
          t,
          'snapname with a slash',
          { node: 'pve1', vmid: 100, snapname: 'a/rollback', confirm: true },
          'snapname',
        ],
        [
          t,
          'snapname smuggling a parameter',
          { node: 'pve1', vmid: 100, snapname: 'x&start=1', confirm: true },
          'snapname',
        ],
        [
          t,
          'snapname with a newline',
          { node: 'pve1', vmid: 100, snapname: 'x\nvmstate=1', confirm: true },
          'snapname',
        ],
        [
          t,
          'snapname of one character',
          { node: 'pve1', vmid: 100, snapname: 'a', confirm: true },
          'snapname',
        ],
        [
          t,
          'snapname starting with a digit',
          { node: 'pve1', vmid: 100, snapname: '1st', confirm: true },
          'snapname',
        ],
        [
          t,
          'snapname over 40 characters',
          { node: 'pve1', vmid: 100, snapname: 's'.repeat(41), confirm: true },
          'snapname',
        ],
        [t, 'snapname missing', { node: 'pve1', vmid: 100, confirm: true }, 'snapname'],
      ] as [string, string, Record<string, unknown>, string][],
  ),
  [
    'pve_create_snapshot',
    'snapname "current" (the live state)',
    { node: 'pve1', vmid: 100, snapname: 'current', confirm: true },
    'snapname',
  ],
  [
    'pve_create_snapshot',
    'description over 8192 characters',
    { node: 'pve1', vmid: 100, ...SNAP, description: 'd'.repeat(8193), confirm: true },
    'description',
  ],
  [
    'pve_create_snapshot',
    'vmstate as a string',
    { node: 'pve1', vmid: 100, ...SNAP, vmstate: 'yes', confirm: true },
    'vmstate',
  ],
  [
    'pve_rollback_snapshot',
    'start as a number',
    { node: 'pve1', vmid: 100, ...SNAP, start: 1, confirm: true },
    'start',
  ],
];

const READ_CASES: [string, string, Record<string, unknown>, string][] = [
  ['pve_get_task_status', 'a upid that is not one', { node: 'pve1', upid: 'rm -rf /' }, 'upid'],
  [
    'pve_get_task_status',
    'a upid smuggling a path',
    { node: 'pve1', upid: 'UPID:pve1:0000/../../access:' },
    'upid',
  ],
  [
    'pve_get_task_status',
    'log_lines above 500',
    {
      node: 'pve1',
      upid: 'UPID:pve1:00001234:00ABCDEF:6745A1B2:qmstart:100:root@pam:',
      log_lines: 501,
    },
    'log_lines',
  ],
  [
    'pve_list_storage_content',
    'content not a kind',
    { node: 'pve1', storage: 'local', content: 'everything' },
    'content',
  ],
  [
    'pve_list_storage_content',
    'storage path traversal',
    { node: 'pve1', storage: '../../nodes', content: 'iso' },
    'storage',
  ],
  [
    'pve_list_backups',
    'storage with a slash',
    { node: 'pve1', storage: 'local/content' },
    'storage',
  ],
  [
    'pve_get_vm_config',
    'snapshot path traversal',
    { node: 'pve1', vmid: 100, snapshot: '../101' },
    'snapshot',
  ],
  [
    'pve_get_vm_status',
    'guest_ips as a string',
    { node: 'pve1', vmid: 100, guest_ips: 'yes' },
    'guest_ips',
  ],
  ['pve_get_node_metrics', 'node path traversal', { node: '../cluster' }, 'node'],
  ['pve_list_resources', 'resource_type not a type', { resource_type: 'qemu' }, 'resource_type'],
];

describe('hostile inputs to every other tool', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.clearLog();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('has at least 10 rows for every write tool', () => {
    const perTool = rowsPerTool(WRITE_CASES);
    expect([...perTool.keys()].sort()).toEqual([
      'pve_create_snapshot',
      'pve_delete_snapshot',
      'pve_reboot_vm',
      'pve_resume_vm',
      'pve_rollback_snapshot',
      'pve_shutdown_vm',
      'pve_start_vm',
      'pve_stop_vm',
      'pve_suspend_vm',
    ]);
    for (const n of perTool.values()) expect(n).toBeGreaterThanOrEqual(10);
  });

  it.each([...WRITE_CASES, ...READ_CASES])(
    '%s: %s → an error naming the field, nothing sent',
    async (tool, _label, args, field) => {
      await sim.clearLog();
      const result = await call(client, tool, args);
      expect(result.isError).toBe(true);
      const error = result.structuredContent!.error as {
        kind: string;
        fields: { field: string }[];
      };
      expect(error.kind).toBe('invalid_arguments');
      expect(error.fields.map((f) => f.field)).toContain(field);
      expect(text(result)).toMatch(new RegExp(`^- ${field}: `, 'm'));
      expect(await sim.requests()).toEqual([]);
    },
  );

  it('refuses a node named localhost, saying to name the node (rules judge nodes by name)', async () => {
    await sim.clearLog();
    const result = await call(client, 'pve_stop_vm', {
      node: 'localhost',
      vmid: 100,
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /^- node: must name the node \(e\.g\. pve1\), not localhost: the policy judges nodes by name$/m,
    );
    expect(await sim.requests()).toEqual([]);
  });
});

describe('hostile inputs to clone, containers, delete, resize, config, migrate and the raw API', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('has at least 10 rows for every one of these tools', () => {
    const perTool = rowsPerTool(OPS_CASES);
    expect([...perTool.keys()].sort()).toEqual([
      'pve_api_request',
      'pve_clone_vm',
      'pve_create_lxc',
      'pve_delete_vm',
      'pve_migrate_vm',
      'pve_resize_disk',
      'pve_set_vm_config',
    ]);
    for (const n of perTool.values()) expect(n).toBeGreaterThanOrEqual(10);
  });

  it.each(OPS_CASES)('%s: %s → refused, nothing written', async (tool, _label, args, field) => {
    await sim.clearLog();
    const result = await call(client, tool, args);
    expect(result.isError, text(result)).toBe(true);
    const error = result.structuredContent!.error as { kind: string; fields?: { field: string }[] };
    if (field === null) {
      // Refused on a look at the guest (a shrink, a running VM, another guest's disk).
      expect(error.kind).toBe('conflict');
      expect(text(result)).toMatch(/Nothing was sent to Proxmox\.$/);
    } else {
      expect(error.kind).toBe('invalid_arguments');
      expect(error.fields!.map((f) => f.field)).toContain(field);
      expect(await sim.requests()).toEqual([]);
    }
    expect(await sim.writes()).toEqual([]);
  });
});

describe('hostile and malformed inputs', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    await sim.clearLog();
    client = await connect('http');
  });
  afterAll(async () => {
    // Not one write reached Proxmox during the whole table.
    expect(await sim.writes()).toEqual([]);
    await client.close();
  });

  it('has at least 30 create cases', () => {
    expect(CREATE_CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CREATE_CASES)('create: %s → error naming %s', async (_label, args, field) => {
    const result = await call(client, 'pve_create_qemu_vm', args);
    expect(result.isError).toBe(true);
    const error = result.structuredContent!.error as { kind: string; fields: { field: string }[] };
    expect(error.kind).toBe('invalid_arguments');
    // A list element is named with its index, e.g. tags.1.
    expect(error.fields.map((f) => f.field.replace(/\.\d+$/, ''))).toContain(field);
    expect(text(result)).toMatch(new RegExp(`^- ${field}(\\.\\d+)?: `, 'm'));
    expect(text(result).length).toBeLessThan(2000);
    expect(await sim.writes()).toEqual([]);
  });

  it.each(LIST_CASES)(
    'list: %s → error naming %s, no upstream call',
    async (_label, args, field) => {
      await sim.clearLog();
      const result = await call(client, 'pve_list_vms', args);
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(new RegExp(`^- ${field}: `, 'm'));
      expect(await sim.requests()).toEqual([]);
    },
  );
});

/** Arguments policy rules reach into that are no key=value strings: a size such as +10G. */
const SIZES = new Set(['pve_clone_vm resize', 'pve_resize_disk size']);

describe('keys named like members of every object (__proto__, constructor, toString, ...)', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('covers every object and property-string argument of every tool', () => {
    const covered = new Set(
      MEMBER_CASES.map(([tool, , , field]) => `${tool} ${field.split('.')[0]}`),
    );
    const structured = Object.entries(TOOL_CATALOG).flatMap(([tool, args]) =>
      Object.entries(args).flatMap(([arg, fields]) =>
        fields === null || SIZES.has(`${tool} ${arg}`) ? [] : [`${tool} ${arg}`],
      ),
    );
    expect(structured.filter((arg) => !covered.has(arg))).toEqual([]);
  });

  it.each(['qemu', 'lxc'] as const)(
    'covers every property-string config key of a %s guest',
    (kind) => {
      const keys = Object.entries(CONFIG_TABLES[kind].accepted).flatMap(([key, rule]) =>
        rule.kind === 'property' ? [key] : [],
      );
      expect(Object.keys(CONFIG_PROPERTY_VALUES[kind]).sort()).toEqual(keys.sort());
    },
  );

  const refused = async (...[tool, , args, field, message]: MemberRow) => {
    await sim.clearLog();
    const result = await call(client, tool, args);
    expect(result.isError, text(result)).toBe(true);
    const error = result.structuredContent!.error as {
      kind: string;
      fields?: { field: string; message: string }[];
    };
    expect(error.kind, text(result)).toBe('invalid_arguments');
    expect(error.fields!.filter((f) => f.field === field).map((f) => f.message)).toContainEqual(
      expect.stringMatching(message),
    );
    expect(text(result)).toMatch(new RegExp(`^- ${field}: `, 'm'));
    expect(await sim.requests()).toEqual([]);
  };

  it.each(MEMBER_CASES)('%s: %s → refused naming the field, nothing sent', refused);

  it('refuses an argument named __proto__ from a 2026-07-28 client too (a raw request: JSON keeps the key), sending nothing', async () => {
    await sim.clearLog();
    const body = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pve_create_qemu_vm","arguments":{"node":"pve1","confirm":true,"__proto__":{"vmid":100}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`;
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'pve_create_qemu_vm',
      },
      body,
    });
    const answer = await res.text();
    const message = JSON.parse(
      answer.startsWith('{')
        ? answer
        : answer
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6),
    ) as {
      result: {
        isError: boolean;
        structuredContent: { error: { kind: string; fields: { field: string }[] } };
      };
    };
    expect(message.result.isError, answer).toBe(true);
    expect(message.result.structuredContent.error.kind).toBe('invalid_arguments');
    expect(message.result.structuredContent.error.fields.map((f) => f.field)).toEqual([
      '__proto__',
    ]);
    expect(await sim.requests()).toEqual([]);
  });
});

describe('a message nested 20,000 deep', () => {
  it('gets a 400 naming the problem, not an internal error (no client can even stringify it)', async () => {
    const client = await connect('http');
    const session = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pve_create_qemu_vm","arguments":{"node":"pve1","confirm":true,"net0":${deep}}}}`;
    await sim.clearLog();
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
      },
      body,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: {
        code: -32602,
        message: 'Invalid params: the message nests more than 64 levels deep.',
      },
    });
    expect(await sim.requests()).toEqual([]);
    await client.close();
  });
});

describe('an argument nested deeper than its limit, in a message within the message limit', () => {
  // The message limit (64) leaves room for arguments deeper than any tool takes (32): those are
  // refused by the call itself, naming the argument, before anything walks them. The limits are
  // the documented ones (docs/configuration.md), written here, not read from the code.
  const MAX_ARG_DEPTH = 32;
  const MAX_MESSAGE_DEPTH = 64;
  it.each([
    ['just past the argument limit', 'net0', MAX_ARG_DEPTH],
    [
      'at the message limit (envelope, params, arguments, then this)',
      'extra',
      MAX_MESSAGE_DEPTH - 3,
    ],
  ])(
    '%s: invalid_arguments naming the argument, no request to Proxmox',
    async (_label, field, depth) => {
      const client = await connect('http');
      await sim.clearLog();
      const result = await call(client, 'pve_create_qemu_vm', { ...ok, [field]: nested(depth) });
      await client.close();
      expect(result.isError).toBe(true);
      expect(result.structuredContent!.error).toEqual({
        kind: 'invalid_arguments',
        message: `Invalid arguments for pve_create_qemu_vm\n- ${field}: nested more than ${MAX_ARG_DEPTH} levels deep`,
        fields: [{ field, message: `nested more than ${MAX_ARG_DEPTH} levels deep` }],
      });
      expect(await sim.requests()).toEqual([]);
    },
  );
});
