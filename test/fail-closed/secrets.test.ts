// No configured secret comes back out, whatever echoes it: Proxmox messages and `errors` maps,
// redirect locations, HTML from something in front of pveproxy. Checked in the tool result, in
// every log line and in the audit trail, with a Cloudflare Access service token configured.
// And the audit trail's argument hash is keyed: it is not the plain SHA-256 of the arguments.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { hmacHex, importKey } from '../../src/audit/arg-hash';
import type { AuditLog } from '../../src/audit/audit-log';
import { canonicalJson, sha256Hex } from '../../src/audit/canonical';
import type { AppEnv } from '../../src/env';
import { call, connect } from '../worker/helpers/mcp';
import { sim, type SimFault } from '../worker/helpers/sim';
import { auditRecords } from '../worker/helpers/audit';

const TOKEN_SECRET = inject('simulatorTokenSecret');
const ACCESS_SECRET = 'access-secret-0123456789abcdef';
const JSON_TYPE = 'application/json;charset=UTF-8';
const ECHO = `PVEAPIToken=${inject('simulatorTokenId')}=${TOKEN_SECRET} CF-Access-Client-Secret: ${ACCESS_SECRET}`;

const audit = (env as unknown as AppEnv).AUDIT;
const recordOf = async (requestId: string) => (await auditRecords((r) => r.request_id === requestId))[0]!;

const FAULTS: [string, SimFault][] = [
  ['a PVE message', { path: '^/cluster/resources$', status: 500, contentType: JSON_TYPE, body: { data: null, message: `bad header ${ECHO}\n` } }],
  ['a PVE errors map', { path: '^/cluster/resources$', status: 400, contentType: JSON_TYPE, body: { data: null, message: 'Parameter verification failed.\n', errors: { type: `got ${ECHO}` } } }],
  ['a redirect location', { path: '^/cluster/resources$', status: 302, headers: { Location: `https://login.example.com/${encodeURIComponent(ECHO)}/next` }, body: '' }],
  ['an HTML 403 in front of pveproxy', { path: '^/cluster/resources$', status: 403, contentType: 'text/html', body: `<html><body>Forbidden ${ECHO}</body></html>` }],
  ['a plain-text 401 reason', { path: '^/cluster/resources$', status: 401, reason: `no ${TOKEN_SECRET}`, body: '' }],
];

describe('secrets echoed by upstream', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    await sim.config({ authFailDelayMs: 0 });
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('the Access service token is sent (so there is a secret to leak)', async () => {
    await sim.clearLog();
    await call(client, 'pve_list_vms', { limit: 1 });
    const [req] = await sim.requests();
    expect(req!.headers['cf-access-client-id']).toBe('access-client.access');
    expect(req!.headers['cf-access-client-secret']).toBeDefined();
  });

  it.each(FAULTS)('%s reaches no result, log line or audit record', async (_label, fault) => {
    const logs: string[] = [];
    const spies = (['log', 'warn', 'error'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' '))),
    );
    let result;
    try {
      await sim.fault({ ...fault, times: 2 });
      result = await call(client, 'pve_list_vms', { limit: 1 });
    } finally {
      for (const spy of spies) spy.mockRestore();
      await sim.clearFaults(); // a refusal that is not retried leaves its second copy queued
    }
    expect(result.isError).toBe(true);
    const shown = JSON.stringify(result);
    const line = logs.find((l) => l.includes('"msg":"tool_call"'));
    expect(line).toBeDefined();
    const { request_id: requestId } = JSON.parse(line!) as { request_id: string };
    const stored = JSON.stringify(await recordOf(requestId));
    for (const text of [shown, ...logs, stored]) {
      expect(text).not.toContain(TOKEN_SECRET);
      expect(text).not.toContain(ACCESS_SECRET);
      expect(text).not.toContain(encodeURIComponent(ACCESS_SECRET));
    }
  });

  it('names Cloudflare Access as the likely cause of an HTML 403', async () => {
    await sim.fault({ path: '^/cluster/resources$', times: 2, status: 403, contentType: 'text/html', body: '<html><body>Forbidden</body></html>' });
    const result = await call(client, 'pve_list_vms', { limit: 1 });
    expect(result.structuredContent!.error).toMatchObject({ kind: 'upstream.access_denied', upstream_status: 403 });
    expect(JSON.stringify(result.content)).toMatch(/Most likely it is Cloudflare Access.*CF_ACCESS_CLIENT_ID and CF_ACCESS_CLIENT_SECRET/);
  });
});

describe('the argument hash', () => {
  it('is an HMAC under the server\'s own key, not a plain SHA-256 a guess can be checked against', async () => {
    const client = await connect('http');
    const logs: string[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' ')));
    try {
      await call(client, 'pve_create_qemu_vm', { node: 'pve1', vmid: 2100, pool: 'lab', description: '1234' });
    } finally {
      spy.mockRestore();
      await client.close();
    }
    const { request_id: requestId } = JSON.parse(logs.find((l) => l.includes('"msg":"tool_call"'))!) as { request_id: string };
    const record = await recordOf(requestId);
    expect(record.args.description).toBe('[redacted]');
    const canonical = canonicalJson({ node: 'pve1', vmid: 2100, pool: 'lab', description: '1234', wait: false, timeout_s: 60, confirm: false });
    expect(record.args_sha256).not.toBe(await sha256Hex(canonical));
    const key = await runInDurableObject(audit.get(audit.idFromName('audit')) as DurableObjectStub<AuditLog>, (instance) => instance.serverKey('args_hmac'));
    expect(record.args_sha256).toBe(await hmacHex(await importKey(key), canonical));
  });
});
