// What every project that talks to the Proxmox simulator shares: the simulator's tokens, and the
// real PVE 9 schema of the endpoints we call (via vitest's provide/inject). The servers
// themselves: a simulator and a fake identity provider for each Worker of a workerd project
// (test/support/per-worker.ts), one of each shared by a Node project's files (./servers.ts).

import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { SIMULATOR_TOKENS } from '../../../simulator/server.ts';
import { findSchemaFile, loadEndpoints, requireInCi } from '../pve-schema-load.ts';

/** Every endpoint the Worker may call; requests it sends are checked against these. */
const GUEST_KINDS = ['qemu', 'lxc'];
const forEachKind = (template: string): string[] =>
  GUEST_KINDS.map((kind) => template.replace('{kind}', kind));

export const ENDPOINTS_USED = [
  'GET /version',
  'GET /cluster/status',
  'GET /cluster/resources',
  'GET /cluster/nextid',
  'GET /cluster/ha/resources',
  'GET /access/permissions',
  'GET /cluster/replication',
  'GET /nodes',
  'GET /nodes/{node}/status',
  'GET /storage',
  'GET /nodes/{node}/storage',
  'GET /nodes/{node}/storage/{storage}/content',
  'POST /nodes/{node}/qemu',
  'GET /nodes/{node}/tasks/{upid}/status',
  'GET /nodes/{node}/tasks/{upid}/log',
  'GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces',
  'POST /nodes/{node}/qemu/{vmid}/agent/exec',
  'GET /nodes/{node}/qemu/{vmid}/agent/exec-status',
  'GET /nodes/{node}/qemu/{vmid}/agent/file-read',
  'GET /nodes/{node}/qemu/{vmid}/agent/info',
  'GET /nodes/{node}/qemu/{vmid}/agent/get-osinfo',
  'GET /nodes/{node}/qemu/{vmid}/agent/get-fsinfo',
  'POST /nodes/{node}/vzdump',
  'DELETE /nodes/{node}/storage/{storage}/content/{volume}',
  'GET /nodes/{node}/lxc/{vmid}/interfaces',
  ...forEachKind('GET /nodes/{node}/{kind}/{vmid}/status/current'),
  ...forEachKind('GET /nodes/{node}/{kind}/{vmid}/config'),
  ...['start', 'shutdown', 'stop', 'reboot', 'suspend', 'resume'].flatMap((a) =>
    forEachKind(`POST /nodes/{node}/{kind}/{vmid}/status/${a}`),
  ),
  ...forEachKind('GET /nodes/{node}/{kind}/{vmid}/snapshot'),
  ...forEachKind('POST /nodes/{node}/{kind}/{vmid}/snapshot'),
  ...forEachKind('DELETE /nodes/{node}/{kind}/{vmid}/snapshot/{snapname}'),
  ...forEachKind('POST /nodes/{node}/{kind}/{vmid}/snapshot/{snapname}/rollback'),
  'POST /nodes/{node}/qemu/{vmid}/clone',
  'POST /nodes/{node}/qemu/{vmid}/config',
  'PUT /nodes/{node}/lxc/{vmid}/config',
  'POST /nodes/{node}/lxc',
  'GET /nodes/{node}/qemu/{vmid}/migrate',
  ...forEachKind('PUT /nodes/{node}/{kind}/{vmid}/resize'),
  ...forEachKind('POST /nodes/{node}/{kind}/{vmid}/migrate'),
  ...forEachKind('DELETE /nodes/{node}/{kind}/{vmid}'),
];

export default function setup(project: TestProject): void {
  project.provide('simulatorTokenId', SIMULATOR_TOKENS.admin.id);
  project.provide('simulatorTokenSecret', SIMULATOR_TOKENS.admin.secret);
  project.provide('simulatorTokens', SIMULATOR_TOKENS);
  const schemaFile = findSchemaFile(path.resolve(import.meta.dirname, '../../..'));
  requireInCi(
    schemaFile,
    'The PVE 9.1.3 API schema (checked against every request the Worker sends)',
  );
  project.provide('pveEndpoints', schemaFile ? loadEndpoints(schemaFile, ENDPOINTS_USED) : null);
}
