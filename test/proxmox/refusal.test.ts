// Which ACL paths a refusal naming no privilege is about, and what such a request is known to
// need there (PVE's create_vm, pve-container's create and the clone endpoints' `or` check): the
// paths the explanation reads what the token holds on.

import { describe, expect, it } from 'vitest';
import { refusalPaths } from '../../src/proxmox/refusal';

const form = (params: Record<string, string>) => new URLSearchParams(params);

interface Case {
  what: string;
  method: string;
  path: string;
  params: Record<string, string>;
  want: ReturnType<typeof refusalPaths>;
}

describe('refusalPaths', () => {
  it.each<Case>([
    {
      what: 'a VM made in a pool',
      method: 'POST',
      path: '/nodes/pve1/qemu',
      params: { vmid: '4300', pool: 'lab' },
      want: { paths: ['/vms/4300', '/pool/lab'], needs: 'VM.Allocate' },
    },
    {
      what: 'a container made outside any pool',
      method: 'POST',
      path: '/nodes/pve1/lxc',
      params: { vmid: '4301', ostemplate: 'local:vztmpl/debian.tar.zst' },
      want: { paths: ['/vms/4301'], needs: 'VM.Allocate' },
    },
    {
      what: "a clone: the new guest's id, not the source's",
      method: 'POST',
      path: '/nodes/pve1/qemu/100/clone',
      params: { newid: '4302', pool: 'lab' },
      want: { paths: ['/vms/4302', '/pool/lab'], needs: 'VM.Allocate' },
    },
    {
      what: 'a VM restored over an existing one (VM.Backup may do): nothing said to be needed',
      method: 'POST',
      path: '/nodes/pve1/qemu',
      params: { vmid: '100', archive: 'local:backup/vzdump-qemu-100.vma.zst', force: '1' },
      want: { paths: ['/vms/100'] },
    },
    {
      what: 'a container restored over an existing one: likewise',
      method: 'POST',
      path: '/nodes/pve1/lxc',
      params: { vmid: '200', ostemplate: 'local:backup/ct.tar.zst', restore: '1', force: '1' },
      want: { paths: ['/vms/200'] },
    },
    {
      what: "a guest's own endpoint",
      method: 'POST',
      path: '/nodes/pve1/qemu/104/status/stop',
      params: {},
      want: { paths: ['/vms/104'] },
    },
    {
      what: 'a storage of a node',
      method: 'GET',
      path: '/nodes/pve1/storage/local/content',
      params: {},
      want: { paths: ['/storage/local'] },
    },
    {
      what: 'a pool named by poolid',
      method: 'PUT',
      path: '/pools',
      params: { poolid: 'lab', vms: '104' },
      want: { paths: ['/pool/lab'] },
    },
    {
      what: 'a node alone',
      method: 'GET',
      path: '/nodes/pve1/tasks',
      params: {},
      want: { paths: ['/nodes/pve1'] },
    },
    {
      what: 'anything else: the root',
      method: 'GET',
      path: '/cluster/ha/resources',
      params: {},
      want: { paths: ['/'] },
    },
    {
      what: 'a value that is no ACL path segment, left out',
      method: 'POST',
      path: '/nodes/pve1/qemu',
      params: { vmid: '4300', pool: '../access' },
      want: { paths: ['/vms/4300'], needs: 'VM.Allocate' },
    },
  ])('$what', ({ method, path, params, want }) => {
    expect(refusalPaths(method, path, form(params))).toEqual(want);
  });
});
