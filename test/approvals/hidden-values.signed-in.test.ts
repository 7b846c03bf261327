// Nobody approves what they cannot see, at any depth: a value hidden inside an argument is either
// shown to the approver whole, listed on the page as hidden with why (a credential, or what the
// policy's editors hid), or — when it is what the call writes — the call is refused before anyone
// is asked, naming the field, and nothing reaches Proxmox.
//   pve_set_vm_config: require_approval; pve_api_request: require_approval, sensitive
//   ["params.site-secret"]; admin@example.com is an admin (test/support/policies/approvals.ts).

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Approvals } from '../../src/approvals/approvals-store';
import type { AppEnv } from '../../src/env';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { openAsDevUser } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { APPROVALS_POLICY } from '../support/policies/approvals';
import { usePolicy } from '../support/worker/policy';

usePolicy(APPROVALS_POLICY, asEditor());

const EVIL_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl evil@attacker';
const PASSWORD = 'Hunter2-cloud-init-pw';
const HOSTS = '127.0.0.1 localhost\n10.66.6.6 pve1.example.com pve1\n';

let client: Client;

/** The approvals stored for a tool, by id. */
async function approvalIds(tool: string): Promise<string[]> {
  const ns = (env as unknown as AppEnv).APPROVALS as unknown as DurableObjectNamespace<Approvals>;
  return runInDurableObject(ns.get(ns.idFromName('approvals')), (_o, state) =>
    state.storage.sql
      .exec<{ id: string }>('SELECT id FROM approvals WHERE tool = ?', tool)
      .toArray()
      .map((r) => r.id),
  );
}

/** The approval page of `id` as the administrator sees it. */
async function page(id: string): Promise<string> {
  const opened = await openAsDevUser(
    new Browser(),
    `http://localhost/approvals/${id}`,
    'admin@example.com',
    'ops',
  );
  expect(opened.status).toBe(200);
  return opened.html;
}

/** The "Hidden from you" list of a page, as field: why. */
function hiddenOn(html: string): string[] {
  const box = /<div class="box" id="hidden-values">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
  const htmlText = (t: string): string =>
    t
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return [...box.matchAll(/<li><code>([^<]+)<\/code>: ([^<]+)<\/li>/g)].map(
    (m) => `${htmlText(m[1]!)}: ${htmlText(m[2]!)}`,
  );
}

beforeAll(async () => {
  ({ client } = await connectSignedIn('http', {
    user: 'olga@example.com',
    groups: 'ops',
    scopes: ['pve:provision', 'pve:raw'],
  }));
});
afterAll(() => client?.close());
beforeEach(async () => {
  await sim.reset();
  await sim.clearLog();
});

describe('a key change asked for approval', () => {
  it('shows the approver the whole public key and whose it is, nothing hidden', async () => {
    const pending = await call(client, 'pve_set_vm_config', {
      node: 'pve1',
      vmid: 101,
      config: { sshkeys: EVIL_KEY, ciuser: 'root' },
      confirm: true,
    });
    const id = pending.structuredContent?.approval_id as string;
    expect(id, text(pending)).toBeTruthy();
    expect(await sim.writes()).toEqual([]);
    const html = await page(id);
    expect(html).toContain(EVIL_KEY.split(' ')[1]);
    expect(html).toContain('evil@attacker');
    expect(html).not.toContain('[redacted]');
    expect(html).not.toContain('id="hidden-values"');
  });
});

describe('a credential inside an argument', () => {
  it('is listed on the page as hidden, with why, and the rest of the call is shown', async () => {
    const pending = await call(client, 'pve_set_vm_config', {
      node: 'pve1',
      vmid: 101,
      config: { ciuser: 'ann', cipassword: PASSWORD },
      confirm: true,
    });
    const id = pending.structuredContent?.approval_id as string;
    expect(id, text(pending)).toBeTruthy();
    expect(await sim.writes()).toEqual([]);
    const html = await page(id);
    expect(hiddenOn(html)).toEqual([
      "config.cipassword: the guest's cloud-init password: you approve that one is set, not which",
    ]);
    expect(html).toContain('ann');
    expect(html).not.toContain(PASSWORD);
  });

  it("lists a raw request's secret parameter as hidden", async () => {
    const pending = await call(client, 'pve_api_request', {
      method: 'POST',
      path: '/storage',
      params: {
        storage: 'pbs-offsite',
        type: 'pbs',
        server: 'pbs.example.com',
        datastore: 'store1',
        username: 'backup@pbs',
        password: 'pbs-Passw0rd-91',
      },
      confirm: true,
    });
    const id = pending.structuredContent?.approval_id as string;
    expect(id, text(pending)).toBeTruthy();
    expect(hiddenOn(await page(id))).toEqual([
      'params.password: a password: you approve that one is set, not which',
    ]);
  });
});

describe('a hidden value that is what the call writes', () => {
  it.each<[string, Record<string, unknown>, string]>([
    [
      "a node's whole /etc/hosts",
      { method: 'POST', path: '/nodes/pve1/hosts', params: { data: HOSTS } },
      'params.data',
    ],
    [
      'keys typed into a VM',
      { method: 'PUT', path: '/nodes/pve1/qemu/100/sendkey', params: { key: 'ctrl-alt-delete' } },
      'params.key',
    ],
    [
      'a parameter the policy hides (it cannot tell that a person need not read it)',
      {
        method: 'POST',
        path: '/storage',
        params: { storage: 'x', type: 'dir', 'site-secret': 'site-Only-Known-Here' },
      },
      'params.site-secret',
    ],
    [
      'a value written under a name',
      {
        method: 'PUT',
        path: '/cluster/options',
        params: { description: 'lab', value: 'anything-at-all' },
      },
      'params.value',
    ],
  ])(
    '%s: refused before anyone is asked, naming the field, nothing sent',
    async (_l, args, field) => {
      const before = await approvalIds('pve_api_request');
      const result = await call(client, 'pve_api_request', { ...args, confirm: true });
      expect(result.isError, text(result)).toBe(true);
      expect(text(result)).toContain(
        `pve_api_request would be judged by what ${field} holds, which an approver would not see (shown "[redacted]" or cut): ${field} (`,
      );
      expect(text(result)).toContain('Nobody was asked and nothing was sent.');
      expect(result.structuredContent?.approval_id).toBeUndefined();
      expect(await approvalIds('pve_api_request')).toEqual(before);
      expect(await sim.requests()).toEqual([]);
    },
  );

  it('a judged value too long to show whole is refused the same way', async () => {
    const before = await approvalIds('pve_set_vm_config');
    const result = await call(client, 'pve_set_vm_config', {
      node: 'pve1',
      vmid: 101,
      config: { description: 'x'.repeat(1_500) },
      confirm: true,
    });
    expect(result.isError, text(result)).toBe(true);
    expect(text(result)).toMatch(
      /pve_set_vm_config would be judged by what config\.description holds, which an approver would not see \(shown "\[redacted\]" or cut\): config\.description \(longer than 1,000 characters: shown cut, and it is what the call runs, reads or writes\)/,
    );
    expect(await approvalIds('pve_set_vm_config')).toEqual(before);
    expect(await sim.writes()).toEqual([]);
  });
});
