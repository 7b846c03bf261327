// The simulator accepts and refuses requests as the real PVE 9.1.3 schema does: each request is
// judged by the existing request checker (test/support/pve-schema-check.ts, reading Proxmox's
// own schema) and sent to the simulator; a request the checker refuses must get a 400 naming the
// same parameters, and one it accepts must pass parameter verification.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../simulator/api/routes.ts';
import { checkRequest } from '../support/pve-schema-check.ts';
import { findSchemaFile, loadEndpoints, requireInCi } from '../support/pve-schema-load.ts';
import { useSimulator } from '../support/sim-harness.ts';

const schemaFile = findSchemaFile(path.resolve(import.meta.dirname, '../..'));
requireInCi(
  schemaFile,
  'The PVE 9.1.3 API schema (the requests the simulator accepts are checked against it)',
);
const endpoints = schemaFile
  ? loadEndpoints(
      schemaFile,
      ROUTES.map((route) => `${route.method} ${route.path}`),
    )
  : [];

type Request = readonly [method: string, path: string, params: Record<string, string>];

const REQUESTS: readonly Request[] = [
  ['POST', '/nodes/pve1/qemu/100/status/shutdown', { timeout: '30', forceStop: '1' }],
  ['POST', '/nodes/pve1/qemu/100/status/shutdown', { forceStop: 'true' }],
  ['POST', '/nodes/pve1/qemu/100/status/stop', { timeout: '-1' }],
  ['POST', '/nodes/pve1/qemu/100/status/suspend', { statestorage: 'local-lvm' }],
  ['POST', '/nodes/pve1/qemu/100/status/suspend', { todisk: '1', statestorage: 'bad storage' }],
  ['POST', '/nodes/pve1/qemu/100/status/start', { machine: 'q35,viommu=amd' }],
  ['POST', '/nodes/pve1/lxc/110/status/suspend', { todisk: '1' }],
  ['POST', '/nodes/pve1/lxc/110/status/shutdown', { timeout: '10', forceStop: '0' }],
  ['POST', '/nodes/pve1/qemu/100/snapshot', { snapname: 'x' }],
  ['POST', '/nodes/pve1/qemu/100/snapshot', { snapname: 'a'.repeat(41) }],
  ['POST', '/nodes/pve1/lxc/110/snapshot', { snapname: 'nightly', vmstate: '1' }],
  ['POST', '/nodes/pve1/qemu/101/snapshot/pre-upgrade/rollback', { start: 'yes' }],
  ['DELETE', '/nodes/pve1/qemu/101/snapshot/pre-upgrade', { force: '1' }],
  ['POST', '/nodes/pve1/qemu/9000/clone', { newid: '99' }],
  ['POST', '/nodes/pve1/qemu/9000/clone', { newid: '150', format: 'qed' }],
  ['POST', '/nodes/pve1/qemu/9000/clone', { newid: '150', name: 'bad_name' }],
  ['POST', '/nodes/pve1/qemu/9000/clone', { name: 'no-newid' }],
  ['PUT', '/nodes/pve2/qemu/104/config', { cores: '4', digest: 'a'.repeat(41) }],
  ['PUT', '/nodes/pve2/qemu/104/config', { force: '1' }],
  ['PUT', '/nodes/pve2/qemu/104/config', { delete: 'name;tags' }],
  ['PUT', '/nodes/pve2/qemu/104/config', { delete: 'name,bad-name!' }],
  ['PUT', '/nodes/pve2/qemu/104/config', { background_delay: '5' }],
  ['POST', '/nodes/pve2/qemu/104/config', { background_delay: '31' }],
  ['PUT', '/nodes/pve2/qemu/104/config', { net0: 'virtio,bridge=vmbr0,tag=4095' }],
  ['PUT', '/nodes/pve1/lxc/110/config', { memory: '8' }],
  ['PUT', '/nodes/pve1/lxc/110/config', { net0: 'name=eth0,model=virtio' }],
  [
    'PUT',
    '/nodes/pve1/lxc/110/config',
    { rootfs: 'local-lvm:vm-110-disk-0,mountoptions=noatime;nodev' },
  ],
  ['PUT', '/nodes/pve1/lxc/110/config', { timezone: 'Europe/Vienna', cmode: 'tty' }],
  ['PUT', '/nodes/pve1/qemu/100/resize', { disk: 'scsi0', size: '+1.5G' }],
  ['PUT', '/nodes/pve1/qemu/100/resize', { disk: 'rootfs', size: '10G' }],
  ['PUT', '/nodes/pve1/lxc/110/resize', { disk: 'mp256', size: '10G' }],
  ['DELETE', '/nodes/pve1/qemu/100', { purge: '1', 'destroy-unreferenced-disks': '2' }],
  ['DELETE', '/nodes/pve1/lxc/110', { force: '1', skiplock: '1' }],
  [
    'POST',
    '/nodes/pve1/qemu/100/migrate',
    { target: 'pve2', targetstorage: 'local-lvm:ceph-pool' },
  ],
  ['POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve2', restart: '1' }],
  ['POST', '/nodes/pve1/lxc/110/migrate', { target: 'pve2', 'target-storage': '1', timeout: '60' }],
  ['POST', '/nodes/pve1/lxc/110/migrate', { target: 'pve 2' }],
  ['POST', '/nodes/pve2/lxc', { vmid: '150', ostemplate: 'local:vztmpl/x.tar.zst', arch: 'sparc' }],
  ['POST', '/nodes/pve2/lxc', { vmid: '150', ostemplate: 'local:vztmpl/x.tar.zst', unique: '1' }],
  ['POST', '/nodes/pve2/lxc', { vmid: '150' }],
  ['GET', '/nodes/pve1/storage/local/content', { content: 'vztmpl', vmid: '100' }],
  ['GET', '/nodes/pve1/storage/local/content', { content: 'images,iso' }],
  ['GET', '/nodes/pve1/storage', { content: 'images,rootdir', enabled: '1' }],
  ['GET', '/storage', { type: 'ceph' }],
  ['GET', '/nodes/pve1/qemu/101/config', { snapshot: 'pre-upgrade', current: '0' }],
  ['GET', '/nodes/pve1/qemu/100/migrate', { target: 'pve_2' }],
];

const client = useSimulator('requests');

/** The top-level parameters a list of checker problems names. */
const named = (problems: string[]) =>
  [...new Set(problems.map((p) => /^([^.:]+)/.exec(p)?.[1] ?? p))].sort();

describe.skipIf(schemaFile === null)(
  'requests judged by the real schema and by the simulator',
  () => {
    it.each(REQUESTS.map((r) => [`${r[0]} ${r[1]} ${JSON.stringify(r[2])}`, r] as const))(
      '%s',
      async (_name, [method, apiPath, params]) => {
        const inQuery = method === 'GET' || method === 'DELETE';
        const problems = checkRequest(endpoints, {
          method,
          path: `/api2/json${apiPath}`,
          query: inQuery ? params : {},
          params: inQuery ? null : params,
        });
        expect(problems.filter((p) => p.includes('not checked'))).toEqual([]);
        const res = await client().api(
          method,
          apiPath,
          inQuery ? { query: params } : { form: params },
        );
        if (problems.length > 0) {
          expect(res.status, res.text).toBe(400);
          expect(Object.keys(res.body.errors ?? {}).sort()).toEqual(named(problems));
        } else {
          expect(res.body.message ?? '', res.text).not.toBe('Parameter verification failed.\n');
        }
      },
    );

    it('covers refused and accepted requests for most of the new routes', () => {
      const judged = REQUESTS.map(([method, apiPath, params]) => {
        const inQuery = method === 'GET' || method === 'DELETE';
        const request = {
          method,
          path: apiPath,
          query: inQuery ? params : {},
          params: inQuery ? null : params,
        };
        return checkRequest(endpoints, request).length > 0;
      });
      expect(judged.filter(Boolean).length).toBeGreaterThan(15);
      expect(judged.filter((refused) => !refused).length).toBeGreaterThan(10);
    });
  },
);
