// The simulator against the real PVE 9.1.3 API schema: every route it serves exists there with
// that method, its parameter schema matches PVE's (names, types, optionality, enums, ranges,
// patterns, formats, property-string keys), and what each route answers fits PVE's `returns`.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../simulator/api/routes.ts';
import { compareParameters, type SimSchema } from '../support/pve-route-compare.ts';
import { checkReturns } from '../support/pve-return-check.ts';
import { findSchemaFile, loadEndpoints, type EndpointDef } from '../support/pve-schema-load.ts';
import { useSimulator, waitTask } from './helpers/sim-harness.ts';

const schemaFile = findSchemaFile(path.resolve(import.meta.dirname, '../..'));
const routeKeys = ROUTES.map((route) => `${route.method} ${route.path}`);
const endpoints = new Map<string, EndpointDef>(
  schemaFile
    ? loadEndpoints(schemaFile, routeKeys, { withReturns: true }).map((def) => [
        `${def.method} ${def.path}`,
        def,
      ])
    : [],
);

/** The endpoints the MCP server's tools call; each must be served. */
const REQUIRED = [
  'GET /version',
  'GET /cluster/status',
  'GET /nodes',
  'GET /nodes/{node}/status',
  'GET /cluster/resources',
  'GET /nodes/{node}/qemu/{vmid}/status/current',
  'GET /nodes/{node}/lxc/{vmid}/status/current',
  'GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces',
  'GET /nodes/{node}/qemu/{vmid}/config',
  'GET /nodes/{node}/lxc/{vmid}/config',
  'GET /storage',
  'GET /nodes/{node}/storage',
  'GET /nodes/{node}/storage/{storage}/content',
  'GET /nodes/{node}/tasks/{upid}/status',
  'GET /nodes/{node}/tasks/{upid}/log',
  'POST /nodes/{node}/qemu',
  'POST /nodes/{node}/lxc',
  'POST /nodes/{node}/qemu/{vmid}/clone',
  'PUT /nodes/{node}/qemu/{vmid}/config',
  'POST /nodes/{node}/qemu/{vmid}/config',
  'PUT /nodes/{node}/lxc/{vmid}/config',
  'GET /nodes/{node}/qemu/{vmid}/migrate',
  ...['qemu', 'lxc'].flatMap((t) => [
    ...['start', 'shutdown', 'stop', 'reboot', 'suspend', 'resume'].map(
      (a) => `POST /nodes/{node}/${t}/{vmid}/status/${a}`,
    ),
    `GET /nodes/{node}/${t}/{vmid}/snapshot`,
    `POST /nodes/{node}/${t}/{vmid}/snapshot`,
    `DELETE /nodes/{node}/${t}/{vmid}/snapshot/{snapname}`,
    `POST /nodes/{node}/${t}/{vmid}/snapshot/{snapname}/rollback`,
    `PUT /nodes/{node}/${t}/{vmid}/resize`,
    `DELETE /nodes/{node}/${t}/{vmid}`,
    `POST /nodes/{node}/${t}/{vmid}/migrate`,
  ]),
];

/** Deliberate simplifications: these options are accepted as plain strings (no inner format). */
const KNOWN_DIFFERENCES = [
  'amd-sev: format pve-qemu-sev-fmt vs none',
  'intel-tdx: format pve-qemu-tdx-fmt vs none',
  'smbios1: format pve-qm-smbios1 vs none',
  'hostpci[n]: format pve-qm-hostpci vs none',
];

describe.skipIf(schemaFile === null)('routes against the PVE 9.1.3 schema', () => {
  it('serves every endpoint the tools call', () => {
    expect(REQUIRED.filter((key) => !routeKeys.includes(key))).toEqual([]);
  });

  it('serves only paths and methods PVE has', () => {
    expect(routeKeys.filter((key) => !endpoints.has(key))).toEqual([]);
    expect(new Set(routeKeys).size).toBe(routeKeys.length);
  });

  it.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    "%s takes PVE's parameters",
    (key, route) => {
      const diffs = compareParameters(endpoints.get(key)?.parameters, route.schema as SimSchema);
      expect(diffs.filter((diff) => !KNOWN_DIFFERENCES.includes(diff))).toEqual([]);
    },
  );

  it('the comparison catches a wrong name, type, optionality and format', () => {
    const real = endpoints.get('POST /nodes/{node}/qemu/{vmid}/snapshot')?.parameters;
    const diffs = compareParameters(real, {
      node: { type: 'string', format: 'pve-node' },
      vmid: { type: 'string', format: 'pve-vmid' },
      snapname: { type: 'string', optional: true, maxLength: 40 },
      vmstate: { type: 'boolean', optional: true },
      comment: { type: 'string', optional: true },
    });
    expect(diffs).toEqual([
      'description: missing in the simulator',
      'vmid: type integer vs string',
      'vmid: minimum 100 vs undefined',
      'vmid: maximum 999999999 vs undefined',
      'snapname: optional false vs true',
      'snapname: format pve-configid vs none',
      "comment: not in PVE's schema",
    ]);
  });
});

/** Where real PVE answers differently from its own schema (and the simulator follows PVE). */
const KNOWN_RETURN_DIFFERENCES = [
  // the schema says integer, the wire carries a string: {"data":"106"} (Cluster.pm's hash key)
  'GET /cluster/nextid: data: expected an integer, got "106"',
];

type Call = readonly [
  route: string,
  method: string,
  path: string,
  params?: Record<string, string | number>,
];

/** One successful call per route, in an order where each leaves the next a valid state. */
const CALLS: readonly Call[] = [
  ['GET /version', 'GET', '/version'],
  ['GET /cluster/status', 'GET', '/cluster/status'],
  ['GET /nodes', 'GET', '/nodes'],
  ['GET /nodes/{node}/status', 'GET', '/nodes/pve2/status'],
  ['GET /cluster/resources', 'GET', '/cluster/resources'],
  ['GET /cluster/resources', 'GET', '/cluster/resources', { type: 'vm' }],
  ['GET /cluster/resources', 'GET', '/cluster/resources', { type: 'storage' }],
  ['GET /cluster/resources', 'GET', '/cluster/resources', { type: 'node' }],
  ['GET /cluster/resources', 'GET', '/cluster/resources', { type: 'sdn' }],
  ['GET /cluster/nextid', 'GET', '/cluster/nextid'],
  ['GET /nodes/{node}/qemu', 'GET', '/nodes/pve1/qemu'],
  ['GET /nodes/{node}/lxc', 'GET', '/nodes/pve2/lxc'],
  ['GET /nodes/{node}/qemu/{vmid}/status/current', 'GET', '/nodes/pve1/qemu/100/status/current'],
  ['GET /nodes/{node}/qemu/{vmid}/status/current', 'GET', '/nodes/pve2/qemu/104/status/current'],
  ['GET /nodes/{node}/lxc/{vmid}/status/current', 'GET', '/nodes/pve1/lxc/110/status/current'],
  ['GET /nodes/{node}/lxc/{vmid}/status/current', 'GET', '/nodes/pve3/lxc/301/status/current'],
  [
    'GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces',
    'GET',
    '/nodes/pve1/qemu/100/agent/network-get-interfaces',
  ],
  ['GET /nodes/{node}/qemu/{vmid}/config', 'GET', '/nodes/pve1/qemu/9000/config'],
  [
    'GET /nodes/{node}/qemu/{vmid}/config',
    'GET',
    '/nodes/pve1/qemu/101/config',
    { snapshot: 'post-upgrade' },
  ],
  ['GET /nodes/{node}/lxc/{vmid}/config', 'GET', '/nodes/pve2/lxc/201/config', { current: 1 }],
  ['GET /nodes/{node}/qemu/{vmid}/snapshot', 'GET', '/nodes/pve1/qemu/101/snapshot'],
  ['GET /nodes/{node}/lxc/{vmid}/snapshot', 'GET', '/nodes/pve2/lxc/201/snapshot'],
  ['GET /storage', 'GET', '/storage'],
  ['GET /nodes/{node}/storage', 'GET', '/nodes/pve1/storage'],
  ['GET /nodes/{node}/storage/{storage}/content', 'GET', '/nodes/pve1/storage/local/content'],
  [
    'GET /nodes/{node}/storage/{storage}/content',
    'GET',
    '/nodes/pve2/storage/local-lvm/content',
    { vmid: 200 },
  ],
  ['GET /nodes/{node}/qemu/{vmid}/migrate', 'GET', '/nodes/pve1/qemu/101/migrate'],
  ['GET /access/permissions', 'GET', '/access/permissions'],
  ['GET /pools', 'GET', '/pools'],
  [
    'POST /nodes/{node}/qemu',
    'POST',
    '/nodes/pve1/qemu',
    { vmid: 120, memory: 1024, scsi0: 'local-lvm:8' },
  ],
  [
    'POST /nodes/{node}/lxc',
    'POST',
    '/nodes/pve2/lxc',
    {
      vmid: 121,
      ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
      storage: 'local-lvm',
    },
  ],
  [
    'POST /nodes/{node}/qemu/{vmid}/clone',
    'POST',
    '/nodes/pve1/qemu/9000/clone',
    { newid: 122, name: 'clone' },
  ],
  [
    'PUT /nodes/{node}/qemu/{vmid}/config',
    'PUT',
    '/nodes/pve1/qemu/100/config',
    { description: 'web' },
  ],
  ['POST /nodes/{node}/qemu/{vmid}/config', 'POST', '/nodes/pve1/qemu/100/config', { onboot: 0 }],
  [
    'PUT /nodes/{node}/lxc/{vmid}/config',
    'PUT',
    '/nodes/pve1/lxc/110/config',
    { description: 'dns' },
  ],
  [
    'PUT /nodes/{node}/qemu/{vmid}/resize',
    'PUT',
    '/nodes/pve1/qemu/100/resize',
    { disk: 'scsi0', size: '+1G' },
  ],
  [
    'PUT /nodes/{node}/lxc/{vmid}/resize',
    'PUT',
    '/nodes/pve1/lxc/110/resize',
    { disk: 'rootfs', size: '+1G' },
  ],
  [
    'POST /nodes/{node}/qemu/{vmid}/snapshot',
    'POST',
    '/nodes/pve3/qemu/300/snapshot',
    { snapname: 'snap1' },
  ],
  [
    'POST /nodes/{node}/lxc/{vmid}/snapshot',
    'POST',
    '/nodes/pve3/lxc/301/snapshot',
    { snapname: 'snap1' },
  ],
  [
    'POST /nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback',
    'POST',
    '/nodes/pve3/qemu/300/snapshot/snap1/rollback',
  ],
  [
    'POST /nodes/{node}/lxc/{vmid}/snapshot/{snapname}/rollback',
    'POST',
    '/nodes/pve3/lxc/301/snapshot/snap1/rollback',
  ],
  [
    'DELETE /nodes/{node}/qemu/{vmid}/snapshot/{snapname}',
    'DELETE',
    '/nodes/pve3/qemu/300/snapshot/snap1',
  ],
  [
    'DELETE /nodes/{node}/lxc/{vmid}/snapshot/{snapname}',
    'DELETE',
    '/nodes/pve3/lxc/301/snapshot/snap1',
  ],
  ['POST /nodes/{node}/qemu/{vmid}/status/start', 'POST', '/nodes/pve2/qemu/104/status/start'],
  [
    'POST /nodes/{node}/qemu/{vmid}/status/shutdown',
    'POST',
    '/nodes/pve1/qemu/101/status/shutdown',
  ],
  ['POST /nodes/{node}/qemu/{vmid}/status/stop', 'POST', '/nodes/pve1/qemu/100/status/stop'],
  ['POST /nodes/{node}/qemu/{vmid}/status/reboot', 'POST', '/nodes/pve1/qemu/102/status/reboot'],
  ['POST /nodes/{node}/qemu/{vmid}/status/suspend', 'POST', '/nodes/pve2/qemu/103/status/suspend'],
  ['POST /nodes/{node}/qemu/{vmid}/status/resume', 'POST', '/nodes/pve2/qemu/103/status/resume'],
  ['POST /nodes/{node}/lxc/{vmid}/status/start', 'POST', '/nodes/pve3/lxc/301/status/start'],
  ['POST /nodes/{node}/lxc/{vmid}/status/stop', 'POST', '/nodes/pve1/lxc/110/status/stop'],
  ['POST /nodes/{node}/lxc/{vmid}/status/shutdown', 'POST', '/nodes/pve2/lxc/200/status/shutdown'],
  ['POST /nodes/{node}/lxc/{vmid}/status/reboot', 'POST', '/nodes/pve2/lxc/201/status/reboot'],
  ['POST /nodes/{node}/lxc/{vmid}/status/suspend', 'POST', '/nodes/pve2/lxc/201/status/suspend'],
  ['POST /nodes/{node}/lxc/{vmid}/status/resume', 'POST', '/nodes/pve2/lxc/201/status/resume'],
  [
    'POST /nodes/{node}/qemu/{vmid}/migrate',
    'POST',
    '/nodes/pve3/qemu/105/migrate',
    { target: 'pve1', online: 1 },
  ],
  [
    'POST /nodes/{node}/lxc/{vmid}/migrate',
    'POST',
    '/nodes/pve3/lxc/301/migrate',
    { target: 'pve2', restart: 1 },
  ],
  ['DELETE /nodes/{node}/qemu/{vmid}', 'DELETE', '/nodes/pve1/qemu/122'],
  ['DELETE /nodes/{node}/lxc/{vmid}', 'DELETE', '/nodes/pve2/lxc/121'],
];

const client = useSimulator('conformance');

describe.skipIf(schemaFile === null)('answers against the PVE 9.1.3 returns schemas', () => {
  it('has a call for every route', () => {
    const called = new Set([
      ...CALLS.map(([route]) => route),
      'GET /nodes/{node}/tasks/{upid}/status',
      'GET /nodes/{node}/tasks/{upid}/log',
    ]);
    expect(routeKeys.filter((key) => !called.has(key))).toEqual([]);
  });

  it('answers every call in the shape PVE declares', async () => {
    const c = client();
    const problems: string[] = [];
    const check = (route: string, data: unknown) => {
      problems.push(
        ...checkReturns(endpoints.get(route)?.returns, data).map((p) => `${route}: ${p}`),
      );
    };
    for (const [route, method, apiPath, params] of CALLS) {
      const options =
        params === undefined
          ? {}
          : method === 'GET' || method === 'DELETE'
            ? { query: params }
            : { form: params };
      const res = await c.api(method, apiPath, options);
      expect(res.status, `${method} ${apiPath}: ${res.text}`).toBe(200);
      check(route, res.body.data);
      if (typeof res.body.data === 'string' && res.body.data.startsWith('UPID:')) {
        const end = await waitTask(c, res.body.data);
        expect(end.exitstatus, `${method} ${apiPath}: ${end.log.join('\n')}`).toMatch(
          /^(OK|WARNINGS: \d+)$/,
        );
        const base = `/nodes/${String(end.status.node)}/tasks/${encodeURIComponent(res.body.data)}`;
        check(
          'GET /nodes/{node}/tasks/{upid}/status',
          (await c.api('GET', `${base}/status`)).body.data,
        );
        check('GET /nodes/{node}/tasks/{upid}/log', (await c.api('GET', `${base}/log`)).body.data);
      }
    }
    expect(problems.filter((problem) => !KNOWN_RETURN_DIFFERENCES.includes(problem))).toEqual([]);
  });
});

describe('checkReturns', () => {
  const schema = {
    type: 'object',
    properties: {
      vmid: { type: 'integer' },
      running: { type: 'boolean', optional: 1 },
      items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      kind: { type: 'string', enum: ['a', 'b'], optional: 1 },
    },
  };

  it.each<[unknown, string[]]>([
    [{ vmid: 1, items: [] }, []],
    [{ vmid: 1, running: true, items: [] }, ['data.running: expected 0 or 1, got true']],
    [{ items: [] }, ['data.vmid: missing (not optional)']],
    [
      { vmid: '1', items: [{}] },
      ['data.vmid: expected an integer, got "1"', 'data.items[0].name: missing (not optional)'],
    ],
    [{ vmid: 1, items: [], kind: 'c' }, ['data.kind: "c" is not one of a, b']],
  ])('checks %j', (data, problems) => {
    expect(checkReturns(schema, data)).toEqual(problems);
  });
});
