// The simulator against the real PVE 9.1.3 API schema: every route it serves exists there with
// that method, its parameter schema matches PVE's (names, types, optionality, enums, ranges,
// patterns, formats, property-string keys), and what each route answers fits PVE's `returns`.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../simulator/api/routes.ts';
import { compareParameters, type SimSchema } from '../support/pve-route-compare.ts';
import { checkReturns } from '../support/pve-return-check.ts';
import {
  findSchemaFile,
  loadEndpoints,
  requireInCi,
  type EndpointDef,
} from '../support/pve-schema-load.ts';
import { CALLS, REQUIRED } from '../support/conformance-calls.ts';
import { useSimulator, waitTask } from '../support/sim-harness.ts';

const schemaFile = findSchemaFile(path.resolve(import.meta.dirname, '../..'));
requireInCi(
  schemaFile,
  'The PVE 9.1.3 API schema (the simulator routes and answers are checked against it)',
);
const routeKeys = ROUTES.map((route) => `${route.method} ${route.path}`);
const endpoints = new Map<string, EndpointDef>(
  schemaFile
    ? loadEndpoints(schemaFile, routeKeys, { withReturns: true }).map((def) => [
        `${def.method} ${def.path}`,
        def,
      ])
    : [],
);

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

const client = useSimulator('conformance');

/** `<backup:NODE:STORAGE:VMID>` → that guest's first backup volid on the storage, as listed. */
async function resolvePlaceholders(c: ReturnType<typeof client>, text: string): Promise<string> {
  const match = /<backup:([^:>]+):([^:>]+):(\d+)>/.exec(text);
  if (!match) return text;
  const [whole, node, storage, vmid] = match;
  const res = await c.api('GET', `/nodes/${node}/storage/${storage}/content`, {
    query: { content: 'backup', vmid: Number(vmid) },
  });
  const volid = (res.body.data as { volid: string }[] | undefined)?.[0]?.volid;
  if (volid === undefined) throw new Error(`no backup of ${vmid} on ${node}/${storage}`);
  return text.replace(whole ?? '', volid);
}

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
    let previous: unknown;
    for (const [route, method, rawPath, rawParams] of CALLS) {
      const apiPath = await resolvePlaceholders(c, rawPath);
      const params =
        rawParams === undefined
          ? undefined
          : Object.fromEntries(
              await Promise.all(
                Object.entries(rawParams).map(async ([key, value]) => [
                  key,
                  value === '<pid>'
                    ? String((previous as { pid?: number } | null)?.pid)
                    : typeof value === 'string'
                      ? await resolvePlaceholders(c, value)
                      : value,
                ]),
              ),
            );
      const options =
        params === undefined
          ? {}
          : method === 'GET' || method === 'DELETE'
            ? { query: params }
            : { form: params };
      const res = await c.api(method, apiPath, options);
      expect(res.status, `${method} ${apiPath}: ${res.text}`).toBe(200);
      check(route, res.body.data);
      previous = res.body.data;
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
