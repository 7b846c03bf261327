// pve_api_request over /mcp against the simulator (under the allow-all test policy): reads go
// out at once with their parameters in the query; writes preview unless confirm, secrets
// redacted; a task's UPID is pointed at; Proxmox's errors keep their meaning; huge answers
// are cut.

import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, text } from '../support/worker/mcp';
import { simSession } from '../support/worker/session';
import { sim } from '../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

describe('pve_api_request', () => {
  const session = simSession();
  const client = (): Client => session.client;

  it('reads at once, parameters in the query', async () => {
    const r = await call(client(), 'pve_api_request', {
      method: 'GET',
      path: '/cluster/resources',
      params: { type: 'vm' },
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'sent',
      request: { method: 'GET', path: '/cluster/resources', params: { type: 'vm' } },
    });
    expect((r.structuredContent!.data as { vmid: number }[]).map((g) => g.vmid)).toContain(9000);
    const [get] = await sim.requests();
    expect(get).toMatchObject({
      method: 'GET',
      path: '/api2/json/cluster/resources',
      query: { type: 'vm' },
      body: null,
    });
  });

  it('previews a write without confirm, its secrets redacted, writing nothing', async () => {
    const args = {
      method: 'PUT',
      path: '/nodes/pve1/lxc/110/config',
      params: { password: 'not-a-real-param', onboot: false },
    };
    const r = await call(client(), 'pve_api_request', args);
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      request: { params: { password: '[redacted]', onboot: '0' } },
    });
    expect(JSON.stringify(r)).not.toContain('not-a-real-param');
    expect(await sim.writes()).toEqual([]);
  });

  it('takes localhost as a target that names no node (a notification target), not as a clone target', async () => {
    const matcher = {
      method: 'POST',
      path: '/cluster/notifications/matchers',
      params: { name: 'ops', target: 'localhost' },
    };
    const r = await call(client(), 'pve_api_request', matcher);
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      request: { params: { name: 'ops', target: 'localhost' } },
    });
    const clone = {
      ...matcher,
      path: '/nodes/pve1/qemu/100/clone',
      params: { newid: 106, target: 'localhost' },
    };
    const refused = await call(client(), 'pve_api_request', clone);
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(
      /^- params\.target: must name the node \(e\.g\. pve1\), not localhost/m,
    );
    expect(await sim.writes()).toEqual([]);
  });

  it('sends a confirmed write, booleans as 1/0, and points at the task it started', async () => {
    const r = await call(client(), 'pve_api_request', {
      method: 'POST',
      path: '/nodes/pve1/qemu/101/status/suspend',
      params: { todisk: false },
      confirm: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent!.data).toMatch(/^UPID:pve1:.*:qmpause:101:/);
    expect(text(r)).toMatch(/It started task UPID:.*follow it with pve_get_task_status/);
    const [post] = await sim.writes();
    expect(post!.params).toEqual({ todisk: '0' });
  });

  it("puts a DELETE's parameters in the query", async () => {
    const r = await call(client(), 'pve_api_request', {
      method: 'DELETE',
      path: '/nodes/pve3/lxc/301',
      params: { purge: true },
      confirm: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    const [del] = await sim.writes();
    expect(del).toMatchObject({
      path: '/api2/json/nodes/pve3/lxc/301',
      query: { purge: '1' },
      body: null,
    });
  });

  it("keeps Proxmox's errors as they are", async () => {
    const r = await call(client(), 'pve_api_request', {
      method: 'GET',
      path: '/nodes/pve1/qemu/4242/status/current',
    });
    expect(r.isError).toBe(true);
    expect(r.structuredContent!.error).toMatchObject({
      kind: 'upstream.server_error',
      upstream_status: 500,
    });
  });

  it('cuts an answer too large for a conversation', async () => {
    await sim.fault({
      method: 'GET',
      path: '^/version$',
      status: 200,
      contentType: 'application/json;charset=UTF-8',
      body: { data: { blob: 'x'.repeat(100_000) } },
    });
    const r = await call(client(), 'pve_api_request', { method: 'GET', path: '/version' });
    expect(r.structuredContent).toMatchObject({ mode: 'sent', truncated: true });
    expect(r.structuredContent!.data).toBeUndefined();
    expect(text(r)).toMatch(/^GET \/version answered 100\d{3} characters; the first 65536:/);
    expect(text(r).length).toBeLessThan(66_000);
  });
});
