// One redaction for every place a call's arguments go: a marker in every sensitive field of every
// tool that takes one (Proxmox's secret parameters, and what the policy lists as `sensitive`) is
// found in the request sent to Proxmox once a person approved the call, and nowhere else: not in
// the preview or any result, the audit trail or its export, the stored approval, its page, /admin,
// the webhook bodies of any format (blast radius included), the question asked in the
// conversation, a log line, or the spans exported to the OTLP receiver. A call whose stdin the
// policy hides is refused before anyone is asked, so its marker is nowhere at all.
//
// Project redaction: IDP=dev, ADMIN_USERS=admin@example.com, json/slack/teams receivers and an
// OTLP one (test/support/setup/receivers.ts); its policy, test/support/policies/redaction.ts, put
// in force by an editor.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Approvals } from '../../src/approvals/approvals-store';
import { BUILT_IN_SENSITIVE } from '../../src/audit/canonical';
import { POLICY_EVENT_TOOL } from '../../src/audit/record';
import type { AppEnv } from '../../src/env';
import { TOOLS } from '../../src/tools';
import { decide } from '../support/worker/decide';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { openAsDevUser } from '../support/form-browser';
import { auditStub } from '../support/worker/audit';
import { ORIGIN } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import type { Received } from '../support/setup/receivers';
import { OTLP_KEY } from '../support/notify-secret';
import { REDACTION_POLICY } from '../support/policies/redaction';
import { usePolicy } from '../support/worker/policy';

usePolicy(REDACTION_POLICY, asEditor());

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';

/** A marker per field: letters and digits only, so every encoding on the way keeps it whole. */
const mark = (field: string): string => `Zq7${field.replace(/[^A-Za-z0-9]/g, '')}Xw`;

interface Case {
  tool: string;
  /** The sensitive fields, as `sensitive` entries name them (`config.cipassword`). */
  fields: string[];
  args: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    tool: 'pve_create_qemu_vm',
    fields: ['description'],
    args: { node: 'pve1', name: 'redact01', memory: 1024, description: mark('qemuDescription') },
  },
  {
    tool: 'pve_clone_vm',
    // sshkeys are public keys, shown whole (test/approvals/hidden-values.signed-in.test.ts).
    fields: ['cipassword', 'description'],
    args: {
      node: 'pve1',
      source_vmid: 9000,
      name: 'redact02',
      cipassword: mark('cloneCipassword'),
      sshkeys: KEY,
      description: mark('cloneDescription'),
    },
  },
  {
    tool: 'pve_create_lxc',
    fields: ['password'],
    args: {
      node: 'pve1',
      ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
      hostname: 'redact03',
      password: mark('lxcPassword'),
      ssh_public_keys: KEY,
    },
  },
  {
    tool: 'pve_set_vm_config',
    // The policy's config.description is part of what the change writes: a call with it is
    // refused unasked (below).
    fields: ['config.cipassword'],
    args: { node: 'pve1', vmid: 101, config: { cipassword: mark('configCipassword') } },
  },
  {
    tool: 'pve_create_snapshot',
    fields: ['description'],
    args: { node: 'pve1', vmid: 100, snapname: 'redact1', description: mark('snapDescription') },
  },
  {
    tool: 'pve_create_backup',
    fields: ['notes'],
    args: { node: 'pve1', vmid: 100, storage: 'local', notes: mark('backupNotes') },
  },
  {
    tool: 'pve_api_request',
    // The policy's params.site-secret likewise (below).
    fields: ['params.password'],
    args: {
      method: 'POST',
      path: '/storage',
      params: {
        storage: 'redactpbs',
        type: 'pbs',
        server: 'pbs.example.com',
        datastore: 'store1',
        username: 'backup@pbs',
        password: mark('rawPassword'),
      },
    },
  },
];

/** The marker of each case's fields, as the case's arguments hold it. */
function markersOf(c: Case): Record<string, string> {
  return Object.fromEntries(
    c.fields.map((field) => {
      const value = field
        .split('.')
        .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], c.args);
      const text = Array.isArray(value) ? value.join(' ') : String(value);
      return [field, /Zq7[A-Za-z0-9]+Xw/.exec(text)![0]];
    }),
  );
}

const STDIN = mark('execStdin');
const ELICITED = mark('elicitDescription');

/** Everything the server said, stored, sent or logged, by where it went. */
const seen: Record<string, string[]> = {
  results: [],
  questions: [],
  pages: [],
};
let logged: string[] = [];
const spies: { mockRestore(): void }[] = [];

/** The places holding `marker`, besides the requests to Proxmox. */
async function placesOf(marker: string): Promise<string[]> {
  const receiver = (await (await fetch(`${inject('receiverUrl')}/_log`)).json()) as Received[];
  const approvals = await approvalRows();
  const audit = (await auditStub().query({ limit: 1000 })).records;
  // Every call is recorded here, its spans sent once its record is written: wait for them all.
  let spans: Received[] = [];
  await until(async () => {
    spans = (await (await fetch(`${inject('receiverUrl')}/_spans`)).json()) as Received[];
    const sent = spans.map((r) => r.body).join('\n');
    // (A policy change is audited too, by the policy store: no call, no span.)
    const calls = audit.filter((r) => r.tool !== POLICY_EVENT_TOOL);
    return calls.every((r) => sent.includes(`"${r.request_id}"`));
  });
  const exported = await (await admin.get(`${ORIGIN}/admin/audit?format=jsonl&limit=1000`)).text();
  const adminPage = await (await admin.get(`${ORIGIN}/admin`)).text();
  const places: Record<string, string> = {
    results: seen.results!.join('\n'),
    'conversation questions': seen.questions!.join('\n'),
    'approval pages': seen.pages!.join('\n'),
    '/admin': adminPage,
    'audit records': JSON.stringify(audit),
    'audit export': exported,
    'stored approvals': JSON.stringify(approvals),
    'webhook bodies': receiver.map((r) => r.body).join('\n'),
    // Every call's spans (the project records them all), this file's and its neighbours'.
    'exported spans': spans.map((r) => r.body).join('\n'),
    'log lines': logged.join('\n'),
  };
  return Object.entries(places)
    .filter(([, text]) => text.includes(marker))
    .map(([place]) => place);
}

async function approvalRows(): Promise<unknown[]> {
  const ns = (env as unknown as AppEnv).APPROVALS as unknown as DurableObjectNamespace<Approvals>;
  return runInDurableObject(ns.get(ns.idFromName('approvals')), (_o, state) =>
    state.storage.sql.exec('SELECT * FROM approvals').toArray(),
  );
}

async function sentToProxmox(): Promise<string> {
  return JSON.stringify(await sim.requests());
}

let admin: Browser;
let agent: Client;
let asking: Client;

async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  seen.results!.push(JSON.stringify(result));
  return result as { isError?: boolean; structuredContent?: Record<string, unknown> };
}

const ALL_SCOPES = ['pve:read', 'pve:operate', 'pve:provision', 'pve:guest', 'pve:raw'];

beforeAll(async () => {
  await sim.reset();
  await sim.clearLog();
  await fetch(`${inject('receiverUrl')}/_reset`, { method: 'POST' });
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const)
    spies.push(
      vi.spyOn(console, level).mockImplementation((...parts: unknown[]) => {
        logged.push(parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(' '));
      }),
    );
  admin = new Browser();
  await openAsDevUser(admin, `${ORIGIN}/admin`, 'admin@example.com', 'ops');
  ({ client: agent } = await connectSignedIn('http', {
    user: 'agent@example.com',
    groups: 'ops',
    scopes: ALL_SCOPES,
  }));
  // A client that can be asked in the conversation: it approves what it is asked.
  ({ client: asking } = await connectSignedIn(
    'http',
    { user: 'asker@example.com', groups: 'ops', scopes: ALL_SCOPES },
    undefined,
    (params) => {
      seen.questions!.push(JSON.stringify(params));
      return { action: 'accept', content: { approve: true } };
    },
  ));
}, 90_000);

afterAll(async () => {
  for (const spy of spies) spy.mockRestore();
  await Promise.all([agent?.close(), asking?.close()]);
});

describe('the test covers every sensitive field', () => {
  it('names every argument of every tool that Proxmox holds secret', () => {
    const builtIn = new Set(BUILT_IN_SENSITIVE);
    const covered = new Set(CASES.flatMap((c) => c.fields.map((f) => `${c.tool}.${f}`)));
    const missing = TOOLS.flatMap((t) =>
      Object.keys(t.input.shape)
        .filter((arg) => builtIn.has(arg))
        .map((arg) => `${t.name}.${arg}`),
    ).filter((name) => !covered.has(name));
    expect(missing).toEqual([]);
  });
});

describe('a marker in every sensitive field', () => {
  /** Each case's approval, once every case was previewed, asked, approved and run. */
  const approvals = new Map<string, string>();

  beforeAll(async () => {
    for (const c of CASES) {
      const writes = c.tool !== 'pve_guest_file_read';
      const confirm = writes ? { confirm: true } : {};
      if (writes) {
        const preview = await callTool(agent, c.tool, c.args);
        expect(preview.isError, JSON.stringify(preview)).toBeFalsy();
      }
      const pending = await callTool(agent, c.tool, { ...c.args, ...confirm });
      const id = pending.structuredContent?.approval_id as string;
      expect(id, JSON.stringify(pending)).toBeTruthy();
      approvals.set(c.tool, id);
      const page = await openAsDevUser(
        new Browser(),
        `${ORIGIN}/approvals/${id}`,
        'admin@example.com',
        'ops',
      );
      expect(page.status).toBe(200);
      seen.pages!.push(page.html);
      expect((await decide(id, 'admin@example.com', 'approve')).html).toContain('Approved.');
      await callTool(agent, c.tool, { ...c.args, ...confirm, approval_id: id });
    }
    // Every receiver got each request and its decision (two hops through the queue).
    await until(async () => {
      const log = (await (await fetch(`${inject('receiverUrl')}/_log`)).json()) as Received[];
      const of = (event: string) => log.filter((r) => r.headers['x-approval-event'] === event);
      return (
        [...approvals.values()].every(
          (id) => of('approval.requested').filter((r) => r.body.includes(id)).length === 3,
        ) && of('approval.decided').length >= 3 * approvals.size
      );
    });
  }, 120_000);

  it.each(CASES)('$tool: reaches Proxmox once approved, and nothing else', async (c) => {
    const sent = await sentToProxmox();
    for (const [field, marker] of Object.entries(markersOf(c))) {
      expect(sent, `${c.tool}.${field} sent to Proxmox`).toContain(marker);
      expect(await placesOf(marker), `${c.tool}.${field}`).toEqual([]);
    }
  });

  it.each([
    [
      'pve_set_vm_config',
      [
        {
          field: 'config.cipassword',
          why: "the guest's cloud-init password: you approve that one is set, not which",
        },
      ],
    ],
    ['pve_create_qemu_vm', [{ field: 'description', why: 'the policy marks it sensitive' }]],
  ])(
    '%s: tells the page and every receiver which values are hidden, and why',
    async (tool, hidden) => {
      const id = approvals.get(tool)!;
      const page = seen.pages!.find((html) => html.includes(`/approvals/${id}"`))!;
      expect(page).toContain('id="hidden-values"');
      for (const h of hidden) expect(page).toContain(`<li><code>${h.field}</code>: `);
      const log = (await (await fetch(`${inject('receiverUrl')}/_log`)).json()) as Received[];
      const asked = log.filter(
        (r) => r.headers['x-approval-event'] === 'approval.requested' && r.body.includes(id),
      );
      expect(asked).toHaveLength(3);
      for (const r of asked) {
        const body = JSON.parse(r.body) as { type?: string; hidden?: unknown };
        if (body.type === 'approval.requested') expect(body.hidden).toEqual(hidden);
        else
          for (const h of hidden)
            expect(r.body, r.path).toContain(`Hidden from approvers: ${h.field} (`);
      }
    },
  );

  it('asked in the conversation, the question does not carry it either', async () => {
    const args = { node: 'pve1', vmid: 101, snapname: 'asked1', description: ELICITED };
    const done = await callTool(asking, 'pve_create_snapshot', { ...args, confirm: true });
    expect(done.isError, JSON.stringify(done)).toBeFalsy();
    expect(seen.questions!.length).toBeGreaterThan(0);
    // The person asked is told what they do not see, and why.
    expect(seen.questions!.at(-1)).toContain(
      'Hidden from you: description (the policy marks it sensitive).',
    );
    expect(await sentToProxmox()).toContain(ELICITED);
    expect(await placesOf(ELICITED)).toEqual([]);
  });

  // What an approver must read to judge a call (a command, its stdin, a file's path), hidden by
  // the policy: nobody is asked to approve "[redacted]", so the call is refused and goes nowhere.
  it.each<[string, string, Record<string, unknown>]>([
    ['the command', 'pve_guest_exec', { vmid: 100, command: ['echo', mark('execCommand')] }],
    ['stdin', 'pve_guest_exec', { vmid: 100, command: ['cat'], input_data: STDIN }],
    [
      "the policy's config.description",
      'pve_set_vm_config',
      { vmid: 101, config: { description: mark('configDescription') } },
    ],
    [
      "the policy's params.site-secret",
      'pve_api_request',
      {
        method: 'POST',
        path: '/storage',
        params: { storage: 'redactdir', type: 'dir', 'site-secret': mark('rawSiteSecret') },
      },
    ],
  ])(
    'a call with %s hidden is refused before anyone is asked: the marker is nowhere at all',
    async (_what, tool, args) => {
      const marker = /Zq7[A-Za-z0-9]+Xw/.exec(JSON.stringify(args))![0];
      const node = tool === 'pve_api_request' ? {} : { node: 'pve1' };
      const refused = await callTool(agent, tool, { ...node, ...args, confirm: true });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused)).toMatch(
        /an approver would not see \(shown \W{1,2}\[redacted\]/,
      );
      expect(refused.structuredContent?.approval_id).toBeUndefined();
      expect(await sentToProxmox()).not.toContain(marker);
      expect(await placesOf(marker)).toEqual([]);
    },
  );

  it('a file read with its path hidden is refused before anyone is asked', async () => {
    const marker = mark('fileReadFile');
    const refused = await callTool(agent, 'pve_guest_file_read', {
      node: 'pve1',
      vmid: 100,
      file: `/etc/${marker}`,
    });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent?.approval_id).toBeUndefined();
    expect(await sentToProxmox()).not.toContain(marker);
    expect(await placesOf(marker)).toEqual([]);
  });

  it('the log lines were read at all (the spies saw the calls)', () => {
    expect(logged.some((line) => line.includes('"msg":"tool_call"'))).toBe(true);
    logged = [];
  });

  it("the spans were read at all (this file's calls were exported), and the export's key is nowhere else", async () => {
    const spans = (await (await fetch(`${inject('receiverUrl')}/_spans`)).json()) as Received[];
    expect(spans.some((r) => r.body.includes('"pve_clone_vm"'))).toBe(true);
    expect(spans.every((r) => r.headers['x-otlp-key'] === OTLP_KEY)).toBe(true);
    expect(await placesOf(OTLP_KEY)).toEqual([]);
  });
});

async function until(test: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await test())) {
    if (Date.now() - started > ms) throw new Error('what was awaited did not arrive in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
