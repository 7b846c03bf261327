// Every class of Proxmox (and Cloudflare-in-front-of-Proxmox) failure becomes a clear tool
// error that names what happened and what to check, without a stack trace or a secret.

import { afterAll, beforeAll, beforeEach, describe, expect, it, inject, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text } from '../support/worker/mcp';
import { sim, type SimFault } from '../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const PVE_JSON = 'application/json;charset=UTF-8';
const ACCESS_LOGIN =
  '<!DOCTYPE html><html><head><title>Sign in ・ Cloudflare Access</title></head><body><script src="https://team.cloudflareaccess.com/cdn-cgi/access/x.js"></script></body></html>';

interface Row {
  label: string;
  fault: SimFault;
  tool: 'list' | 'create';
  message: RegExp;
  kind: string;
  status?: number;
}

const ROWS: Row[] = [
  {
    label: '400 with per-parameter errors',
    tool: 'create',
    fault: {
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 400,
      reason: 'Parameter verification failed.',
      contentType: PVE_JSON,
      body: {
        data: null,
        errors: { scsi0: "storage 'fast' does not exist", vmid: 'VM 150 already exists' },
        message: 'Parameter verification failed.\n',
      },
    },
    message:
      /Proxmox rejected the parameters \(400 Parameter verification failed\.\) — scsi0: storage 'fast' does not exist; vmid: VM 150 already exists/,
    kind: 'upstream.invalid_parameters',
    status: 400,
  },
  {
    label: '401 with an empty body (token rejected)',
    tool: 'list',
    fault: {
      path: '^/cluster/resources$',
      status: 401,
      reason: 'Authentication failed!',
      body: '',
    },
    message: /Proxmox rejected the API token \(401 Authentication failed!\)\. Check PVE_TOKEN_ID/,
    kind: 'upstream.auth_failed',
    status: 401,
  },
  {
    label: '403 naming the missing privilege',
    tool: 'create',
    fault: {
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 403,
      reason: 'Permission check failed (/vms/150, VM.Allocate)',
      contentType: PVE_JSON,
      body: { data: null, message: 'Permission check failed (/vms/150, VM.Allocate)\n' },
    },
    message: /lacks the privilege VM\.Allocate on \/vms\/150/,
    kind: 'upstream.forbidden',
    status: 403,
  },
  {
    label: '403 naming privileges of which any one would do',
    tool: 'create',
    fault: {
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 403,
      reason:
        'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace|Datastore.Audit)',
      contentType: PVE_JSON,
      body: {
        data: null,
        message:
          'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace|Datastore.Audit)\n',
      },
    },
    message:
      /The Proxmox API token lacks the privilege Datastore\.AllocateSpace or Datastore\.Audit \(any one would do\) on \/storage\/local-lvm \(403 /,
    kind: 'upstream.forbidden',
    status: 403,
  },
  {
    label: '403 for what only root@pam may do',
    tool: 'create',
    fault: {
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 403,
      reason: 'Permission check failed (user != root@pam)',
      contentType: PVE_JSON,
      body: { data: null, message: 'Permission check failed (user != root@pam)\n' },
    },
    message:
      /Proxmox lets only root@pam itself do POST \/nodes\/pve1\/qemu, never an API token, whatever it holds \(403 Permission check failed \(user != root@pam\)\)\./,
    kind: 'upstream.forbidden',
    status: 403,
  },
  {
    label: '403 from an old server with the text only in the reason phrase',
    tool: 'create',
    fault: {
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 403,
      reason: 'Permission check failed (/sdn/zones/localnetwork/vmbr0, SDN.Use)',
      contentType: PVE_JSON,
      body: { data: null },
    },
    message: /lacks the privilege SDN\.Use on \/sdn\/zones\/localnetwork\/vmbr0/,
    kind: 'upstream.forbidden',
    status: 403,
  },
  {
    label: "500 with PVE's message",
    tool: 'list',
    fault: {
      path: '^/cluster/resources$',
      status: 500,
      reason: 'cfs-lock timeout',
      contentType: PVE_JSON,
      body: { data: null, message: 'cluster not ready - no quorum?\n' },
    },
    message: /Proxmox reported an error \(500\): cluster not ready - no quorum\?/,
    kind: 'upstream.server_error',
    status: 500,
  },
  {
    label: '501 for a chunked body, with the cloudflared fix',
    tool: 'create',
    fault: {
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 501,
      reason: 'chunked transfer encoding not supported',
      body: '',
    },
    message: /chunked request body .*disableChunkedEncoding: true/,
    kind: 'upstream.not_implemented',
    status: 501,
  },
  {
    label: '596 from pveproxy proxying to another node',
    tool: 'list',
    fault: {
      path: '^/cluster/resources$',
      status: 596,
      reason: 'Connection reset by peer',
      body: '',
    },
    message: /pveproxy could not reach the target node \(596 Connection reset by peer\)/,
    kind: 'upstream.node_unreachable',
    status: 596,
  },
  {
    label: 'Cloudflare Access login page instead of JSON',
    tool: 'list',
    fault: {
      path: '^/cluster/resources$',
      status: 200,
      contentType: 'text/html; charset=UTF-8',
      body: ACCESS_LOGIN,
    },
    message: /Cloudflare Access refused the request .* CF_ACCESS_CLIENT_ID/,
    kind: 'upstream.access_denied',
    status: 200,
  },
  {
    label: 'Cloudflare Access redirect to its login',
    tool: 'create',
    fault: {
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 302,
      headers: {
        Location:
          'https://team.cloudflareaccess.com/cdn-cgi/access/login/pve.example.com?kid=abc&redirect_url=%2F',
      },
      body: '',
    },
    message:
      /Cloudflare Access refused the request \(302, redirect to https:\/\/team\.cloudflareaccess\.com\/cdn-cgi\/access\/login\/pve\.example\.com\)/,
    kind: 'upstream.access_denied',
    status: 302,
  },
  {
    label: 'another redirect',
    tool: 'list',
    fault: {
      path: '^/cluster/resources$',
      status: 301,
      headers: { Location: 'https://pve.example.com:8006/api2/json/cluster/resources' },
      body: '',
      times: 2,
    },
    message:
      /got a redirect \(301 to https:\/\/pve\.example\.com:8006\/api2\/json\/cluster\/resources\)\. Check PVE_BASE_URL/,
    kind: 'upstream.redirect',
    status: 301,
  },
  {
    label: 'Cloudflare Tunnel down: 530 / error 1033',
    tool: 'list',
    fault: {
      path: '^/cluster/resources$',
      status: 530,
      contentType: 'text/plain; charset=UTF-8',
      body: 'error code: 1033',
      times: 2,
    },
    message: /Cloudflare could not reach pveproxy through the tunnel \(530, error 1033\)/,
    kind: 'upstream.tunnel_error',
    status: 530,
  },
  {
    label: 'an HTML page from something that is not pveproxy',
    tool: 'list',
    fault: {
      path: '^/cluster/resources$',
      status: 200,
      contentType: 'text/html',
      body: '<html><body>Welcome to nginx!</body></html>',
    },
    message: /Expected JSON from the Proxmox API but got text\/html/,
    kind: 'upstream.not_json',
    status: 200,
  },
  {
    label: 'a timeout',
    tool: 'list',
    fault: { path: '^/cluster/resources$', hang: true },
    message: /Proxmox did not answer GET \/cluster\/resources within 2 s\./,
    kind: 'upstream.timeout',
  },
  {
    // Its length declared, so the runtime reads it whole: the request's time still bounds it.
    label: 'a body that stops half way',
    tool: 'list',
    fault: { path: '^/cluster/resources$', streamBytes: 1000, chunked: false, hang: true },
    message: /Proxmox did not answer GET \/cluster\/resources within 2 s\./,
    kind: 'upstream.timeout',
  },
  {
    label: 'a dropped connection, twice',
    tool: 'list',
    fault: { path: '^/cluster/resources$', drop: true, times: 2 },
    message: /Could not connect to the Proxmox API for GET \/cluster\/resources/,
    kind: 'upstream.network',
  },
];

describe('Proxmox errors become clear tool errors', () => {
  let client: Client;
  const secret = inject('simulatorTokenSecret');
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());
  beforeEach(() => sim.reset());

  it.each(ROWS)('$label', async (row) => {
    await sim.fault({ times: 1, ...row.fault });
    const args =
      row.tool === 'list' ? {} : { node: 'pve1', vmid: 150, scsi0: 'local-lvm:8', confirm: true };
    const result = await call(
      client,
      row.tool === 'list' ? 'pve_list_vms' : 'pve_create_qemu_vm',
      args,
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(row.message);
    const error = result.structuredContent!.error as { kind: string; upstream_status?: number };
    expect(error.kind).toBe(row.kind);
    expect(error.upstream_status).toBe(row.status);
    const everything = JSON.stringify(result);
    expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/\bat [\w.]+ \(|\.ts:\d+/); // no stack frames
  });

  it('names the node that is offline (595 from pveproxy)', async () => {
    await sim.setNode('pve3', 'offline');
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve3',
      vmid: 150,
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/pveproxy could not reach node pve3 \(595 /);
    expect(result.structuredContent!.error).toMatchObject({
      kind: 'upstream.node_unreachable',
      upstream_status: 595,
    });
  });

  it("says of a refusal naming no privilege only Proxmox's text: the server's token's privileges are not the caller's", async () => {
    await sim.fault({
      times: 1,
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 403,
      reason: 'Permission check failed',
      contentType: PVE_JSON,
      body: { data: null, message: 'Permission check failed\n' },
    });
    const args = { node: 'pve1', vmid: 150, confirm: true };
    const result = await call(client, 'pve_create_qemu_vm', args);
    expect(text(result)).toContain('Proxmox refused the request (403 Permission check failed).');
    expect((await sim.requests()).map((r) => r.path)).not.toContain(
      '/api2/json/access/permissions',
    );
  });

  it('explains a pool that does not exist (403 from PVE)', async () => {
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: 150,
      pool: 'nope',
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /Proxmox refused the request \(403 Permission check failed \(pool 'nope' does not exist\)\)/,
    );
  });

  it('retries a GET once after a 502 and then succeeds', async () => {
    await sim.fault({
      path: '^/cluster/resources$',
      status: 502,
      contentType: 'text/html',
      body: '<html>502 Bad Gateway</html>',
    });
    const result = await call(client, 'pve_list_vms', {});
    expect(result.isError).toBeFalsy();
    const gets = (await sim.requests()).filter((r) => r.path === '/api2/json/cluster/resources');
    expect(gets.map((r) => r.status)).toEqual([502, 200]);
  });

  it('never retries a POST, even after a 503', async () => {
    await sim.fault({
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 503,
      contentType: 'text/html',
      body: '<html>503</html>',
    });
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: 150,
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(await sim.writes()).toHaveLength(1);
  });

  it('warns that a create whose answer was lost may have happened', async () => {
    await sim.fault({ method: 'POST', path: '^/nodes/pve1/qemu$', drop: true });
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: 150,
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /may or may not have reached Proxmox: check with pve_list_vms whether VM 150 exists/,
    );
    expect(await sim.writes()).toHaveLength(1);
  });

  it.each([
    [
      'a 502 from the tunnel',
      { status: 502, contentType: 'text/html', body: '<html>502 Bad Gateway</html>' },
      true,
    ],
    [
      'a 200 that is not JSON',
      { status: 200, contentType: 'text/html', body: '<html>ok?</html>' },
      true,
    ],
    [
      'a 530 (tunnel down: nothing reached pveproxy)',
      { status: 530, contentType: 'text/plain', body: 'error code: 1033' },
      false,
    ],
    [
      'a JSON 500 from pveproxy',
      {
        status: 500,
        contentType: 'application/json;charset=UTF-8',
        body: { data: null, message: 'storage full\n' },
      },
      false,
    ],
  ] as const)(
    'tells whether a create answered by %s may have happened',
    async (_label, fault, unknown) => {
      await sim.fault({ method: 'POST', path: '^/nodes/pve1/qemu$', ...fault });
      const result = await call(client, 'pve_create_qemu_vm', {
        node: 'pve1',
        vmid: 151,
        confirm: true,
      });
      expect(result.isError).toBe(true);
      expect(/may or may not have reached Proxmox/.test(text(result))).toBe(unknown);
      expect((result.structuredContent!.error as { kind: string }).kind === 'indeterminate').toBe(
        unknown,
      );
    },
  );

  it('logs one JSON line per tool call, without secrets', async () => {
    const spy = vi.spyOn(console, 'log');
    try {
      await call(client, 'pve_list_vms', { limit: 2 });
      await call(client, 'pve_create_qemu_vm', { node: '../x' });
      const lines = spy.mock.calls
        .map((c) => String(c[0]))
        .filter((l) => l.includes('"msg":"tool_call"'));
      expect(lines).toHaveLength(2);
      const [list, create] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(list).toMatchObject({
        tool: 'pve_list_vms',
        outcome: 'ok',
        upstream_status: 200,
        upstream_calls: 1,
        user: 'anonymous',
      });
      expect(typeof list!.request_id).toBe('string');
      expect(typeof list!.latency_ms).toBe('number');
      expect(create).toMatchObject({
        tool: 'pve_create_qemu_vm',
        outcome: 'invalid',
        upstream_status: null,
        upstream_calls: 0,
      });
      for (const l of lines) expect(l).not.toContain(secret);
    } finally {
      spy.mockRestore();
    }
  });
});
