// No configured secret comes back out, whatever echoes it: Proxmox messages and `errors` maps,
// redirect locations, HTML from something in front of pveproxy; as configured or transformed
// (case, separators, line breaks, percent-encoding, HTML references, base64, hex). Checked in the
// tool result, in every log line and in the audit trail, with a Cloudflare Access service token
// configured.
// And the audit trail's argument hash is keyed: it is not the plain SHA-256 of the arguments.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { hmacHex, importKey } from '../../src/audit/arg-hash';
import type { ServerKeys } from '../../src/keys/server-keys';
import { canonicalJson, sha256Hex } from '../../src/audit/canonical';
import type { AppEnv } from '../../src/env';
import { call, connect, text } from '../support/worker/mcp';
import { sim, type SimFault } from '../support/worker/sim';
import { auditRecords } from '../support/worker/audit';
import { usePolicy } from '../support/worker/policy';
import { FAIL_CLOSED_POLICY } from '../support/policies/fail-closed';

usePolicy(FAIL_CLOSED_POLICY);

const TOKEN_ID = inject('simulatorTokenId');
const TOKEN_SECRET = inject('simulatorTokenSecret');
const ACCESS_SECRET = 'access-secret-0123456789abcdef';
const JSON_TYPE = 'application/json;charset=UTF-8';
const ECHO = `PVEAPIToken=${TOKEN_ID}=${TOKEN_SECRET} CF-Access-Client-Secret: ${ACCESS_SECRET}`;
const HEADERS = `Authorization: PVEAPIToken=${TOKEN_ID}=${TOKEN_SECRET}\r\nCF-Access-Client-Secret: ${ACCESS_SECRET}\r\n`;

const codes = (s: string): number[] => [...new TextEncoder().encode(s)];
const percentEach = (s: string): string =>
  codes(s)
    .map((c) => `%${c.toString(16).toUpperCase()}`)
    .join('');
const references = (s: string): string =>
  codes(s)
    .map((c, i) => (i % 2 ? `&#${c};` : `&#x${c.toString(16)};`))
    .join('');
const hex = (s: string): string =>
  codes(s)
    .map((c) => c.toString(16).padStart(2, '0'))
    .join('');
const urlSafe = (s: string): string =>
  btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const wrapAt = (s: string, columns: number): string =>
  s.match(new RegExp(`.{1,${columns}}`, 'g'))!.join('\r\n');
const halves = (s: string): string => `${s.slice(0, 18)}\n${s.slice(18)}`;

/**
 * Whether `text` (JSON, perhaps JSON inside JSON) still shows `secret` in any form the rows
 * echo. Written with plain regexes, apart from the scrubber, so it checks the scrubber rather
 * than repeating it.
 */
function reveals(text: string, secret: string): boolean {
  const flat = text.replace(/(\\+[rn]|\s)+/g, '');
  const decoded = flat
    .replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCharCode(Number(d)));
  const bare = (s: string) => s.toLowerCase().replace(/-/g, '');
  if (bare(decoded).includes(bare(secret))) return true;
  const binary = String.fromCharCode(...codes(secret));
  for (const run of flat.match(/[A-Za-z0-9+/_-]{16,}/g) ?? []) {
    for (let at = 0; at < 4; at++) {
      const b64 = run.slice(at).replace(/-/g, '+').replace(/_/g, '/');
      const whole = b64.slice(0, b64.length % 4 === 1 ? -1 : undefined);
      if (atob(whole.padEnd(Math.ceil(whole.length / 4) * 4, '=')).includes(binary)) return true;
    }
  }
  for (const run of flat.match(/[0-9a-f]{16,}/gi) ?? []) {
    for (let at = 0; at < 2; at++) {
      const bytes = run
        .slice(at)
        .match(/../g)!
        .map((h) => String.fromCharCode(parseInt(h, 16)));
      if (bytes.join('').includes(binary)) return true;
    }
  }
  return false;
}

const recordOf = async (requestId: string) =>
  (await auditRecords((r) => r.request_id === requestId))[0]!;

const FAULTS: [string, SimFault][] = [
  [
    'a PVE message',
    {
      path: '^/cluster/resources$',
      status: 500,
      contentType: JSON_TYPE,
      body: { data: null, message: `bad header ${ECHO}\n` },
    },
  ],
  [
    'a PVE errors map',
    {
      path: '^/cluster/resources$',
      status: 400,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: 'Parameter verification failed.\n',
        errors: { type: `got ${ECHO}` },
      },
    },
  ],
  [
    'a redirect location',
    {
      path: '^/cluster/resources$',
      status: 302,
      headers: { Location: `https://login.example.com/${encodeURIComponent(ECHO)}/next` },
      body: '',
    },
  ],
  [
    'an HTML 403 in front of pveproxy',
    {
      path: '^/cluster/resources$',
      status: 403,
      contentType: 'text/html',
      body: `<html><body>Forbidden ${ECHO}</body></html>`,
    },
  ],
  [
    'a plain-text 401 reason',
    { path: '^/cluster/resources$', status: 401, reason: `no ${TOKEN_SECRET}`, body: '' },
  ],
  // Transformed on the way back: no longer the text as configured.
  [
    'upper case in a PVE message',
    {
      path: '^/cluster/resources$',
      status: 500,
      contentType: JSON_TYPE,
      body: { data: null, message: `bad header ${ECHO.toUpperCase()}\n` },
    },
  ],
  [
    'no hyphens in a 401 reason',
    {
      path: '^/cluster/resources$',
      status: 401,
      reason: `no ${TOKEN_SECRET.replace(/-/g, '')}`,
      body: '',
    },
  ],
  [
    'split across lines in an errors map',
    {
      path: '^/cluster/resources$',
      status: 400,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: 'Parameter verification failed.\n',
        errors: { token: `got ${halves(TOKEN_SECRET)}`, access: halves(ACCESS_SECRET) },
      },
    },
  ],
  [
    'percent-encoded per character in a redirect location',
    {
      path: '^/cluster/resources$',
      status: 302,
      headers: { Location: `https://login.example.com/${percentEach(TOKEN_SECRET)}/next` },
      body: '',
    },
  ],
  [
    'HTML character references in a PVE message',
    {
      path: '^/cluster/resources$',
      status: 500,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: `bad header ${references(TOKEN_SECRET)} ${references(ACCESS_SECRET)}`,
      },
    },
  ],
  [
    'base64 of tokenid:secret (HTTP Basic) in a PVE message',
    {
      path: '^/cluster/resources$',
      status: 500,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: `got Authorization: Basic ${btoa(`${TOKEN_ID}:${TOKEN_SECRET}`)}`,
      },
    },
  ],
  [
    'base64 of the whole PVEAPIToken header in a PVE message',
    {
      path: '^/cluster/resources$',
      status: 500,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: `got ${btoa(`Authorization: PVEAPIToken=${TOKEN_ID}=${TOKEN_SECRET}`)}`,
      },
    },
  ],
  [
    'URL-safe base64 wrapped at 76 columns in an errors map',
    {
      path: '^/cluster/resources$',
      status: 400,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: 'Parameter verification failed.\n',
        errors: { headers: wrapAt(urlSafe(HEADERS), 76) },
      },
    },
  ],
  // Cut where a message is shortened (its first line, 500 characters): scrubbed before the cut,
  // or the part before it would stay.
  [
    'a secret across the 500-character cut of a PVE message',
    {
      path: '^/cluster/resources$',
      status: 500,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: `${'x'.repeat(484)} ${TOKEN_SECRET} ${'y'.repeat(475)}${ACCESS_SECRET}`,
      },
    },
  ],
  [
    'a secret across the 500-character cut of an errors map value',
    {
      path: '^/cluster/resources$',
      status: 400,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: 'Parameter verification failed.\n',
        errors: {
          token: `${'x'.repeat(488)}${TOKEN_SECRET}`,
          access: `${'y'.repeat(490)}${ACCESS_SECRET}`,
        },
      },
    },
  ],
  [
    'a secret across the first line break of a PVE message',
    {
      path: '^/cluster/resources$',
      status: 500,
      contentType: JSON_TYPE,
      body: { data: null, message: `bad header ${halves(TOKEN_SECRET)} ${halves(ACCESS_SECRET)}` },
    },
  ],
  [
    'hex in an errors map',
    {
      path: '^/cluster/resources$',
      status: 400,
      contentType: JSON_TYPE,
      body: {
        data: null,
        message: 'Parameter verification failed.\n',
        errors: { token: hex(TOKEN_SECRET), access: hex(ACCESS_SECRET).toUpperCase() },
      },
    },
  ],
];

/** Every line the Worker writes to the console, at any level, until `restore()`. */
function watchConsole(): { logs: string[]; restore(): void } {
  const logs: string[] = [];
  const spies = (['log', 'warn', 'error', 'info', 'debug'] as const).map((level) =>
    vi
      .spyOn(globalThis.console, level)
      .mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' '))),
  );
  return {
    logs,
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}

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
    const watched = watchConsole();
    let result;
    try {
      await sim.fault({ ...fault, times: 2 });
      result = await call(client, 'pve_list_vms', { limit: 1 });
    } finally {
      watched.restore();
      await sim.clearFaults(); // a refusal that is not retried leaves its second copy queued
    }
    const { logs } = watched;
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
      expect(reveals(text, TOKEN_SECRET), text).toBe(false);
      expect(reveals(text, ACCESS_SECRET), text).toBe(false);
      // Nor a part of one (a cut through it would leave that).
      expect(text).not.toContain(TOKEN_SECRET.slice(0, 12));
      expect(text).not.toContain(ACCESS_SECRET.slice(0, 12));
    }
  });

  it('a task log whose lines split a secret, or wrap its base64, reaches no result, log line or audit record', async () => {
    const upid = 'UPID:pve1:00001234:00ABCDEF:6745A1B2:qmstart:100:root@pam:';
    const lines = [
      `token ${TOKEN_SECRET.slice(0, 18)}`,
      `${TOKEN_SECRET.slice(18)} and ${ACCESS_SECRET.slice(0, 15)}`,
      ACCESS_SECRET.slice(15),
      ...wrapAt(urlSafe(HEADERS), 40).split('\r\n'),
    ];
    const log = lines.map((t, i) => ({ n: i + 1, t }));
    const watched = watchConsole();
    let result;
    try {
      await sim.fault({
        path: '/tasks/.*/status$',
        times: 1,
        status: 200,
        contentType: JSON_TYPE,
        body: { data: { status: 'stopped', exitstatus: 'OK', upid, node: 'pve1' } },
      });
      await sim.fault({
        path: '/tasks/.*/log$',
        times: 2,
        status: 200,
        contentType: JSON_TYPE,
        body: { data: log, total: log.length },
      });
      result = await call(client, 'pve_get_task_status', { node: 'pve1', upid, log_lines: 50 });
    } finally {
      watched.restore();
      await sim.clearFaults();
    }
    expect(result.isError, text(result)).toBeFalsy();
    expect((result.structuredContent!.log as string[]).length).toBe(lines.length);
    const { logs } = watched;
    const line = logs.find((l) => l.includes('"msg":"tool_call"'))!;
    const stored = JSON.stringify(
      await recordOf((JSON.parse(line) as { request_id: string }).request_id),
    );
    // Every line written to the console while the call ran (log, warn and error alike).
    for (const logged of logs) {
      for (const secret of [TOKEN_SECRET, ACCESS_SECRET]) {
        expect(logged).not.toContain(secret.slice(0, 12));
        expect(reveals(logged, secret), logged).toBe(false);
      }
    }
    for (const shown of [
      JSON.stringify(result.structuredContent),
      JSON.stringify(result.content),
      stored,
    ]) {
      for (const secret of [TOKEN_SECRET, ACCESS_SECRET]) {
        expect(reveals(shown, secret), shown).toBe(false);
        expect(
          reveals(JSON.parse(shown.startsWith('[') ? '{}' : shown)?.log?.join('') ?? '', secret),
          shown,
        ).toBe(false);
      }
    }
  });

  it('names Cloudflare Access as the likely cause of an HTML 403', async () => {
    await sim.fault({
      path: '^/cluster/resources$',
      times: 2,
      status: 403,
      contentType: 'text/html',
      body: '<html><body>Forbidden</body></html>',
    });
    const result = await call(client, 'pve_list_vms', { limit: 1 });
    expect(result.structuredContent!.error).toMatchObject({
      kind: 'upstream.access_denied',
      upstream_status: 403,
    });
    expect(JSON.stringify(result.content)).toMatch(
      /Most likely it is Cloudflare Access.*CF_ACCESS_CLIENT_ID and CF_ACCESS_CLIENT_SECRET/,
    );
  });
});

describe('the argument hash', () => {
  it("is an HMAC under the server's own key, not a plain SHA-256 a guess can be checked against", async () => {
    const client = await connect('http');
    const logs: string[] = [];
    const spy = vi
      .spyOn(console, 'log')
      .mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' ')));
    try {
      await call(client, 'pve_create_qemu_vm', {
        node: 'pve1',
        vmid: 2100,
        pool: 'lab',
        description: '1234',
      });
    } finally {
      spy.mockRestore();
      await client.close();
    }
    const { request_id: requestId } = JSON.parse(
      logs.find((l) => l.includes('"msg":"tool_call"'))!,
    ) as { request_id: string };
    const record = await recordOf(requestId);
    expect(record.args.description).toBe('[redacted]');
    const canonical = canonicalJson({
      node: 'pve1',
      vmid: 2100,
      pool: 'lab',
      description: '1234',
      wait: false,
      timeout_s: 60,
      confirm: false,
    });
    expect(record.args_hmac).not.toBe(await sha256Hex(canonical));
    const keys = (env as unknown as AppEnv).SERVER_KEYS;
    const key = await runInDurableObject(
      keys.get(keys.idFromName('keys')) as unknown as DurableObjectStub<ServerKeys>,
      (instance: ServerKeys) => instance.key('args_hmac'),
    );
    expect(record.args_hmac).toBe(await hmacHex(await importKey(key), canonical));
  });
});
