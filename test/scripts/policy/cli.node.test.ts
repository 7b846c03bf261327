// `npm run policy -- check|explain`: validates a policy file and explains a decision offline.
// The checker runs in-process (scripts/policy/cli.ts, the function the script calls); the last
// tests run the npm script itself, for its exit statuses and its two output streams.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { policyCli } from '../../../scripts/policy/cli';
import { TARGET_FIELDS } from '../../../src/policy/conditions';
import { spawnNpmSync } from '../../../scripts/processes.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'policy-cli-'));
/**
 * A guest's facts as the server would read them for the bundled policy's rules (its prod rule
 * reads the tags of a guest a confirmed write acts on): one tagged neither prod nor anything.
 */
const LAB = { tags: [] };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The checker's report and errors, as the script would print them, and its exit status. */
function run(...args: string[]): { status: number | null; out: string } {
  const lines: string[] = [];
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const status = policyCli(args, {
      log: (line) => lines.push(line),
      error: (line) => lines.push(line),
    });
    return { status, out: lines.join('\n') };
  } finally {
    process.chdir(cwd);
  }
}

/** `npm run -s policy -- ...`: the script as a person runs it. */
function npmRun(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnNpmSync(['run', '-s', 'policy', '--', ...args], {
    cwd: root,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function file(name: string, doc: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return p;
}

describe('npm run policy -- check', () => {
  it('accepts the bundled policy.json', () => {
    const r = run('check', 'policy.json');
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/policy\.json: valid \(default deny/);
  });

  it('lists every error with its JSON pointer and exits 1', () => {
    const r = run(
      'check',
      file('bad.json', {
        version: '1',
        default: 'deny',
        tools: {
          pve_list_vm: {},
          pve_create_qemu_vm: {
            deny_if: [{ path: 'args.ram', op: 'gt', value: 1 }],
            limits: [{ counter: 'c', window: 'week', max: 1, scope: 'grant' }],
          },
        },
      }),
    );
    expect(r.status).toBe(1);
    expect(r.out).toContain('invalid policy (3 errors)');
    expect(r.out).toContain('/tools/pve_list_vm: unknown tool "pve_list_vm"');
    expect(r.out).toContain('/tools/pve_create_qemu_vm/deny_if/0/path: unknown argument "ram"');
    expect(r.out).toContain('/tools/pve_create_qemu_vm/limits/0/window:');
  });

  it('warns when the policy has no default (it then denies every unlisted tool)', () => {
    const r = run('check', file('nodefault.json', { version: '1', tools: { pve_list_vms: {} } }));
    expect(r.status).toBe(0);
    expect(r.out).toContain(
      'warning: /default: no "default": every tool not listed under "tools" is denied',
    );
    expect(r.out).toMatch(/valid \(default deny/);
  });

  it('knows the clusters PVE_CLUSTERS names: a rule naming another is a warning, not an error', () => {
    const policy = {
      version: '1',
      default: 'allow',
      tools: {
        pve_stop_vm: {
          deny_if: [
            { path: 'args.cluster', op: 'eq', value: 'prod' },
            { path: 'args.cluster', op: 'in', value: ['lab', 'staging'] },
          ],
        },
      },
    };
    const checked = file('clusters.json', policy);
    const before = process.env.PVE_CLUSTERS;
    process.env.PVE_CLUSTERS = JSON.stringify([{ name: 'lab' }, { name: 'prod' }]);
    try {
      const r = run('check', checked);
      expect(r.status).toBe(0);
      expect(r.out.split('\n').filter((l) => l.includes('warning'))).toEqual([
        expect.stringContaining(
          'warning: /tools/pve_stop_vm/deny_if/1/value: "staging": no cluster of this server is named so (it reaches lab, prod)',
        ),
      ]);
    } finally {
      if (before === undefined) delete process.env.PVE_CLUSTERS;
      else process.env.PVE_CLUSTERS = before;
    }
    // Without PVE_CLUSTERS, the names are not known: nothing to warn of.
    expect(run('check', checked).out).not.toContain('warning');
  });

  it('says when the file is not JSON', () => {
    const r = run('check', file('nojson.json', '{ version: 1'));
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/nojson\.json: .*JSON/);
  });
});

describe('npm run policy -- explain', () => {
  it.each<[string, object, number, RegExp]>([
    ['an allowed list', { tool: 'pve_list_vms' }, 0, /"kind": "allow"/],
    [
      'a tool the policy does not list (default deny)',
      { tool: 'pve_shutdown_node' },
      3,
      /"rule": "\(default deny\)"/,
    ],
    [
      'a memory cap on a property of the call',
      { tool: 'pve_create_qemu_vm', args: { node: 'pve1', memory: 65536 } },
      3,
      /"rule": "\/tools\/pve_create_qemu_vm\/deny_if\/0"/,
    ],
    [
      'a disk cap inside the scsi0 property string',
      { tool: 'pve_create_qemu_vm', args: { node: 'pve1', scsi0: 'local-lvm:4096' } },
      3,
      /deny_if\/3"[\s\S]*512 GiB/,
    ],
    [
      'a full counter, with the retry time',
      {
        tool: 'pve_create_qemu_vm',
        args: { node: 'pve1', confirm: true },
        counters: { pve_create_qemu_vm_rate: 30 },
        now: '2026-11-30T12:00:45Z',
      },
      3,
      /"kind": "limited"[\s\S]*"retry_after_s": 15/,
    ],
    [
      'a counter below its max',
      {
        tool: 'pve_create_qemu_vm',
        args: { node: 'pve1' },
        counters: { pve_create_qemu_vm_rate: 29 },
      },
      0,
      /"kind": "allow"/,
    ],
    [
      'a start (limited per person)',
      { tool: 'pve_start_vm', args: { node: 'pve1', vmid: 104, confirm: true }, target: LAB },
      0,
      /"kind": "allow"[\s\S]*"counter": "power_actions"/,
    ],
    [
      'a hard stop, which needs a person',
      { tool: 'pve_stop_vm', args: { node: 'pve1', vmid: 104, confirm: true }, target: LAB },
      3,
      /"kind": "approval_required"[\s\S]*"rule": "\/tools\/pve_stop_vm\/action"/,
    ],
    [
      'a rollback, which needs a person',
      {
        tool: 'pve_rollback_snapshot',
        args: { node: 'pve1', vmid: 104, snapname: 'before', confirm: true },
        target: LAB,
      },
      3,
      /approval_required/,
    ],
    [
      'a snapshot read',
      { tool: 'pve_list_snapshots', args: { node: 'pve1', vmid: 104 } },
      0,
      /"kind": "allow"/,
    ],
    [
      'a clean shutdown (limited per person)',
      { tool: 'pve_shutdown_vm', args: { node: 'pve1', vmid: 104, confirm: true }, target: LAB },
      0,
      /"kind": "allow"[\s\S]*"counter": "power_actions"/,
    ],
    [
      'a reboot (the same power-action counter)',
      { tool: 'pve_reboot_vm', args: { node: 'pve1', vmid: 104, confirm: true }, target: LAB },
      0,
      /"counter": "power_actions"/,
    ],
    [
      'a suspend',
      { tool: 'pve_suspend_vm', args: { node: 'pve1', vmid: 104, confirm: true }, target: LAB },
      0,
      /"counter": "power_actions"/,
    ],
    [
      'a resume',
      { tool: 'pve_resume_vm', args: { node: 'pve1', vmid: 104, confirm: true }, target: LAB },
      0,
      /"counter": "power_actions"/,
    ],
    [
      'a power action over its hourly limit',
      {
        tool: 'pve_reboot_vm',
        args: { node: 'pve1', vmid: 104, confirm: true },
        target: LAB,
        counters: { power_actions: 60 },
      },
      3,
      /"kind": "limited"/,
    ],
    [
      'a snapshot (limited per person)',
      {
        tool: 'pve_create_snapshot',
        args: { node: 'pve1', vmid: 104, snapname: 'pre', confirm: true },
        target: LAB,
      },
      0,
      /"counter": "snapshots"/,
    ],
    [
      'a snapshot deletion, which needs a person',
      {
        tool: 'pve_delete_snapshot',
        args: { node: 'pve1', vmid: 104, snapname: 'pre', confirm: true },
        target: LAB,
      },
      3,
      /approval_required[\s\S]*"rule": "\/tools\/pve_delete_snapshot\/action"/,
    ],
    [
      'a task read',
      {
        tool: 'pve_get_task_status',
        args: { node: 'pve1', upid: 'UPID:pve1:0000A1B2:0001C3D4:6790ABCD:qmstart:104:root@pam:' },
      },
      0,
      /"kind": "allow"/,
    ],
    [
      'a migration, which needs a person',
      {
        tool: 'pve_migrate_vm',
        args: { node: 'pve1', vmid: 104, target: 'pve2', confirm: true },
        target: LAB,
      },
      3,
      /approval_required[\s\S]*"rule": "\/tools\/pve_migrate_vm\/action"/,
    ],
    [
      'a raw API call (denied by the bundled policy)',
      { tool: 'pve_api_request', args: { method: 'GET', path: '/version' } },
      3,
      /"kind": "deny"[\s\S]*"rule": "\/tools\/pve_api_request\/action"/,
    ],
  ])('explains %s', (_label, callJson, status, out) => {
    const r = run('explain', 'policy.json', JSON.stringify(callJson));
    expect(r.out).toMatch(out);
    expect(r.status).toBe(status);
  });

  it("reads, as the server would, a guest's facts only where a rule that applies needs them", () => {
    const explain = (callJson: object) => run('explain', 'policy.json', JSON.stringify(callJson));
    // Under the bundled policy the prod rule is for confirmed writes: a preview and a read need
    // no tags, and say nothing of them; a confirmed write needs them, and without them is refused.
    for (const [call, status, kind] of [
      [{ tool: 'pve_shutdown_vm', args: { node: 'pve1', vmid: 100 } }, 0, 'allow'],
      [{ tool: 'pve_get_vm_status', args: { node: 'pve1', vmid: 100 } }, 0, 'allow'],
      // An argument refused before any rule on the guest: decided without it.
      [
        {
          tool: 'pve_guest_exec',
          args: { node: 'pve1', vmid: 100, command: ['sh'], confirm: true },
        },
        3,
        'deny',
      ],
    ] as const) {
      const r = explain(call);
      expect(r.status, r.out).toBe(status);
      expect(r.out).toContain(`"kind": "${kind}"`);
      expect(r.out).not.toContain('target.');
      expect(r.out).not.toContain('"unread');
    }
    const write = explain({
      tool: 'pve_shutdown_vm',
      args: { node: 'pve1', vmid: 100, confirm: true },
    });
    expect(write.status).toBe(3);
    expect(write.out).toContain(
      'target.tags of the guest could not be read from Proxmox (not given to explain)',
    );
    expect(write.out).toContain('note: rules on target.tags judge the guest');
  });

  it('explains a target rule on facts the call gives, and on none as the server would refuse unread facts', () => {
    const policy = file('target.json', {
      version: '1',
      default: 'allow',
      tools: {
        pve_stop_vm: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }] },
        pve_create_qemu_vm: { require: [{ path: 'target.pool', op: 'eq', value: 'lab' }] },
      },
    });
    const stop = { tool: 'pve_stop_vm', args: { node: 'pve1', vmid: 100 } };
    const prod = run('explain', policy, JSON.stringify({ ...stop, target: { tags: ['prod'] } }));
    expect(prod.status).toBe(3);
    expect(prod.out).toContain('Denied by policy: target.tags contains \\"prod\\".');
    const ci = run('explain', policy, JSON.stringify({ ...stop, target: { tags: ['ci'] } }));
    expect(ci.status).toBe(0);
    const unknown = run('explain', policy, JSON.stringify(stop));
    expect(unknown.status).toBe(3);
    expect(unknown.out).toContain(
      'target.tags of the guest could not be read from Proxmox (not given to explain)',
    );
    expect(unknown.out).toMatch(/note: rules on target\.tags judge the guest's facts/);
    // A create is judged on the guest it would make: its own arguments.
    const create = { tool: 'pve_create_qemu_vm', args: { node: 'pve1', vmid: 700 } };
    expect(run('explain', policy, JSON.stringify(create)).status).toBe(3);
    expect(
      run('explain', policy, JSON.stringify({ ...create, args: { ...create.args, pool: 'lab' } }))
        .status,
    ).toBe(0);
    const bad = run('explain', policy, JSON.stringify({ ...stop, target: { owner: 'x' } }));
    expect(bad.status).toBe(2);
    expect(bad.out).toContain(
      `"target" is an object of the guest's facts: ${TARGET_FIELDS.join(', ')}`,
    );
  });

  it("decides docs/policy.md's worked team example as the docs say", () => {
    const docs = readFileSync(path.join(root, 'docs', 'policy.md'), 'utf8');
    const section = docs.slice(docs.indexOf("### A team's rules, worked through"));
    const start = section.indexOf('```json\n') + '```json\n'.length;
    const team = file('team.json', section.slice(start, section.indexOf('\n```', start)));
    expect(run('check', team).status).toBe(0);
    const agent = { id: 'bot', groups: ['agents'] };
    const lead = { id: 'lee', groups: ['leads'] };
    const labGuest = { pool: 'lab', tags: ['lab'], vm_type: 'qemu' };
    const prodGuest = { pool: 'prod', tags: ['prod', 'web'], vm_type: 'qemu' };
    const explain = (tool: string, args: object, user: object, target?: object) =>
      run('explain', team, JSON.stringify({ tool, args, user, ...(target ? { target } : {}) }));
    const vm = (vmid: number) => ({ node: 'pve1', vmid, confirm: true });
    // Agents: pool lab only (prod included: refused, nobody asked); lists stay open.
    expect(explain('pve_start_vm', vm(104), agent, labGuest).status).toBe(0);
    const outside = explain('pve_start_vm', vm(103), agent, { tags: ['ci'], vm_type: 'qemu' });
    expect(outside.out).toContain('"rule": "/all_tools/require/0"');
    expect(explain('pve_start_vm', vm(100), agent, prodGuest).out).toContain(
      '"rule": "/all_tools/require/0"',
    );
    expect(explain('pve_list_vms', {}, agent).status).toBe(0);
    // A create is judged on the guest it would make.
    expect(explain('pve_create_qemu_vm', { ...vm(700), pool: 'lab' }, agent).status).toBe(0);
    expect(explain('pve_create_qemu_vm', vm(700), agent).status).toBe(3);
    // The rest of the team: a change to prod waits for a lead; its preview and reads do not.
    const dana = { id: 'dana', groups: ['dev'] };
    const asked = explain('pve_shutdown_vm', vm(100), dana, prodGuest);
    expect(asked.status).toBe(3);
    expect(JSON.parse(asked.out.slice(0, asked.out.indexOf('\n}') + 2))).toMatchObject({
      kind: 'approval_required',
      rule: '/all_tools/approve_if/0',
      approvers: ['group:leads'],
    });
    expect(explain('pve_shutdown_vm', { ...vm(100), confirm: false }, dana, prodGuest).status).toBe(
      0,
    );
    expect(explain('pve_get_vm_status', { node: 'pve1', vmid: 100 }, dana, prodGuest).status).toBe(
      0,
    );
    // A lead changes prod; a template is never destroyed; reboots are counted per guest.
    const reboot = explain('pve_reboot_vm', vm(100), lead, prodGuest);
    expect(reboot.status).toBe(0);
    expect(reboot.out).toContain('"scope": "guest"');
    expect(
      explain('pve_delete_vm', vm(9000), lead, { template: true, tags: [], vm_type: 'qemu' }).out,
    ).toContain('Templates are never destroyed.');
  });

  it("check refuses a tool's own rule on target.* when the tool acts on no guest", () => {
    const r = run(
      'check',
      file('aimless.json', {
        version: '1',
        default: 'deny',
        tools: {
          pve_list_vms: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }] },
          pve_stop_vm: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }] },
        },
      }),
    );
    expect(r.status).toBe(1);
    expect(r.out).toContain(
      '- /tools/pve_list_vms/deny_if/0: target.tags: pve_list_vms acts on no guest, so no target fact reaches it',
    );
    expect(r.out).not.toContain('pve_stop_vm acts on no guest');
  });

  it("explains a clone's new guest with what it takes from its source: given, or unread", () => {
    const policy = file('clone-tags.json', {
      version: '1',
      tools: {
        pve_clone_vm: { deny_if: [{ path: 'new.tags', op: 'contains', value: 'prod' }] },
      },
    });
    const args = { node: 'pve1', source_vmid: 100, newid: 500, confirm: true };
    const explain = (extra: object = {}) =>
      run('explain', policy, JSON.stringify({ tool: 'pve_clone_vm', args, ...extra }));
    // Not given: the server would read them; here they are unread, and the rule refuses.
    const unknown = explain();
    expect(unknown.status).toBe(3);
    expect(unknown.out).toContain('"rule": "/tools/pve_clone_vm/deny_if/0"');
    expect(unknown.out).toContain('Give them under "inherited"');
    // Given: the source's tags decide; what was not given is still said.
    const prod = explain({ inherited: { tags: ['prod', 'web'], name: 'Copy-of-VM-web01' } });
    expect(prod.status).toBe(3);
    expect(prod.out).toContain('Denied by policy: new.tags contains \\"prod\\".');
    expect(prod.out).toContain(
      'note: pve_clone_vm takes memory, cores, net0, sockets, disk_gib from',
    );
    expect(explain({ inherited: { tags: ['ci'] } }).status).toBe(0);
    // Read as the server keeps them: tags lower-case, a property string parsed.
    expect(explain({ inherited: { tags: ['PROD'] } }).status).toBe(3);
    const bridged = file('clone-bridge.json', {
      version: '1',
      tools: {
        pve_clone_vm: { deny_if: [{ path: 'args.net0.bridge', op: 'eq', value: 'vmbr9' }] },
      },
    });
    const onBridge = (net0: string) =>
      run('explain', bridged, JSON.stringify({ tool: 'pve_clone_vm', args, inherited: { net0 } }))
        .status;
    expect(onBridge('virtio,bridge=vmbr9')).toBe(3);
    expect(onBridge('virtio,bridge=vmbr0')).toBe(0);
    // Only what the tool takes from its source, as the tool takes it.
    const wrong = explain({ inherited: { pool: 'lab' } });
    expect(wrong.status).toBe(2);
    expect(wrong.out).toContain(
      '"inherited" is an object of what pve_clone_vm takes from its source:',
    );
    expect(explain({ inherited: { net0: 'virtio,bridge=bad bridge' } }).status).toBe(2);
    expect(explain({ inherited: null }).status).toBe(2);
    // Only what the call does not set itself is said to be missing.
    const set = run(
      'explain',
      policy,
      JSON.stringify({ tool: 'pve_clone_vm', args: { ...args, memory: 2048, name: 'web-9' } }),
    );
    expect(set.out).toContain('note: pve_clone_vm takes cores, net0, sockets, disk_gib, tags from');
  });

  it("check refuses new.* on a tool that makes no guest, and a create's target fact no new guest has", () => {
    const r = run(
      'check',
      file('unmade.json', {
        version: '1',
        default: 'deny',
        tools: {
          pve_start_vm: { require: [{ path: 'new.pool', op: 'eq', value: 'lab' }] },
          pve_create_qemu_vm: {
            require: [
              { path: 'target.status', op: 'eq', value: 'stopped' },
              { path: 'target.pool', op: 'eq', value: 'lab' },
            ],
          },
          pve_clone_vm: {
            deny_if: [{ path: 'target.status', op: 'eq', value: 'running' }],
            require: [{ path: 'new.pool', op: 'eq', value: 'lab' }],
          },
        },
      }),
    );
    expect(r.status).toBe(1);
    expect(r.out.split('\n').filter((line) => line.startsWith('- '))).toEqual([
      '- /tools/pve_start_vm/require/0: new.pool: pve_start_vm makes no guest, so no new fact reaches it',
      '- /tools/pve_create_qemu_vm/require/0: target.status: pve_create_qemu_vm acts on the guest it makes, which has no status before it exists (only pool, tags, name, node, template, vm_type, cluster)',
    ]);
  });

  it('explains a require on an argument the call leaves out as a denial, and notes what the server fills in', () => {
    const policy = file('require.json', {
      version: '1',
      tools: {
        pve_create_qemu_vm: {
          require: [{ path: 'args.pool', op: 'eq', value: 'agents' }],
          deny_if: [{ path: 'args.vmid', op: 'lt', value: 1000 }],
        },
      },
    });
    const absent = run(
      'explain',
      policy,
      JSON.stringify({ tool: 'pve_create_qemu_vm', args: { node: 'pve1' } }),
    );
    expect(absent.status).toBe(3);
    expect(absent.out).toContain('"rule": "/tools/pve_create_qemu_vm/require/0"');
    expect(absent.out).toContain(
      'args.pool is required (it must satisfy eq \\"agents\\") and this call has none',
    );
    expect(absent.out).toMatch(/note: without "vmid", the server fills it in/);
    const small = run(
      'explain',
      policy,
      JSON.stringify({
        tool: 'pve_create_qemu_vm',
        args: { node: 'pve1', pool: 'agents', vmid: 200 },
      }),
    );
    expect(small.out).toContain('"rule": "/tools/pve_create_qemu_vm/deny_if/0"');
    expect(small.out).not.toMatch(/note:/);
  });

  it('says how a session-scoped limit counts for 2026 clients, which have no session', () => {
    const policy = file('session.json', {
      version: '1',
      default: 'deny',
      tools: {
        pve_list_vms: { limits: [{ counter: 'l', window: 'hour', max: 5, scope: 'session' }] },
      },
    });
    const r = run('explain', policy, JSON.stringify({ tool: 'pve_list_vms' }));
    expect(r.status).toBe(0);
    expect(r.out).toMatch(
      /note: a session-scoped limit counts per MCP session for 2025 clients; a 2026-07-28 client has no session, so for it the limit counts per OAuth grant/,
    );
  });

  it('explains a policy pinning clones to one pool and one bridge, rule by rule', () => {
    const policy = file('pinned.json', {
      version: '1',
      default: 'deny',
      tools: {
        pve_clone_vm: {
          require: [
            {
              path: 'args.pool',
              op: 'eq',
              value: 'lab',
              reason: 'Agent clones go into the lab pool.',
            },
            {
              path: 'args.net0.bridge',
              op: 'eq',
              value: 'vmbr1',
              reason: 'Agent clones get their NIC on vmbr1: pass net0.',
            },
          ],
        },
        pve_set_vm_config: {
          deny_if: [{ path: 'args.config.*.bridge', op: 'neq', value: 'vmbr1' }],
        },
      },
    });
    const clone = (args: object) =>
      run(
        'explain',
        policy,
        JSON.stringify({
          tool: 'pve_clone_vm',
          args: { node: 'pve1', source_vmid: 9000, ...args },
        }),
      );
    const noPool = clone({});
    expect(noPool.status).toBe(3);
    expect(noPool.out).toContain('"rule": "/tools/pve_clone_vm/require/0"');
    expect(noPool.out).toMatch(/note: without "newid", the server fills it in/);
    const noNic = clone({ pool: 'lab' });
    expect(noNic.out).toContain('"rule": "/tools/pve_clone_vm/require/1"');
    expect(noNic.out).toContain('pass net0');
    expect(clone({ pool: 'lab', net0: 'virtio,bridge=vmbr0' }).out).toContain(
      '"rule": "/tools/pve_clone_vm/require/1"',
    );
    const ok = clone({ pool: 'lab', net0: 'virtio,bridge=vmbr1', newid: 5000 });
    expect(ok.out).toMatch(/"kind": "allow"/);
    expect(ok.status).toBe(0);
    const nic = run(
      'explain',
      policy,
      JSON.stringify({
        tool: 'pve_set_vm_config',
        args: { node: 'pve1', vmid: 100, config: { memory: 1024, net1: 'virtio,bridge=vmbr0' } },
      }),
    );
    expect(nic.out).toContain('"rule": "/tools/pve_set_vm_config/deny_if/0"');
    // A NIC without a bridge is user-mode networking: not on vmbr1, so the rule fires.
    const bare = run(
      'explain',
      policy,
      JSON.stringify({
        tool: 'pve_set_vm_config',
        args: { node: 'pve1', vmid: 100, config: { net1: 'virtio' } },
      }),
    );
    expect(bare.status).toBe(3);
    expect(bare.out).toContain('"rule": "/tools/pve_set_vm_config/deny_if/0"');
    expect(bare.out).toMatch(/this call leaves it out/);
    expect(nic.status).toBe(3);
  });

  it.each<[string, object, number, RegExp]>([
    [
      'a big clone',
      { tool: 'pve_clone_vm', args: { node: 'pve1', source_vmid: 9000, memory: 65536 } },
      3,
      /"rule": "\/tools\/pve_clone_vm\/deny_if\/0"/,
    ],
    [
      'a privileged container',
      {
        tool: 'pve_create_lxc',
        args: {
          node: 'pve1',
          ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
          unprivileged: false,
        },
      },
      3,
      /agents create unprivileged containers only/,
    ],
    [
      'destroying a guest',
      {
        tool: 'pve_delete_vm',
        args: { node: 'pve1', vmid: 104, confirm: true },
        target: { ...LAB, template: false },
      },
      3,
      /"kind": "approval_required"/,
    ],
    [
      'destroying a template (never)',
      {
        tool: 'pve_delete_vm',
        args: { node: 'pve1', vmid: 9000, confirm: true },
        target: { tags: [], template: true },
      },
      3,
      /"kind": "deny"[\s\S]*"rule": "\/tools\/pve_delete_vm\/deny_if\/0"[\s\S]*Templates are never destroyed/,
    ],
    [
      'a write to a guest tagged prod, which needs a person',
      {
        tool: 'pve_shutdown_vm',
        args: { node: 'pve1', vmid: 100, confirm: true },
        target: { tags: ['prod', 'web'] },
      },
      3,
      /"kind": "approval_required"[\s\S]*"rule": "\/all_tools\/approve_if\/0"/,
    ],
    [
      'a read of a guest tagged prod (the prod rule is for confirmed writes)',
      { tool: 'pve_get_vm_status', args: { node: 'pve1', vmid: 100 }, target: { tags: ['prod'] } },
      0,
      /"kind": "allow"/,
    ],
    [
      'the raw API',
      { tool: 'pve_api_request', args: { method: 'GET', path: '/version' } },
      3,
      /"rule": "\/tools\/pve_api_request\/action"/,
    ],
    [
      'turning protection off',
      { tool: 'pve_set_vm_config', args: { node: 'pve1', vmid: 102, config: { protection: 0 } } },
      3,
      /Only a person turns protection off/,
    ],
    [
      'a big disk in any config slot',
      {
        tool: 'pve_set_vm_config',
        args: { node: 'pve1', vmid: 100, config: { sata2: 'local-lvm:2048' } },
      },
      3,
      /"rule": "\/tools\/pve_set_vm_config\/deny_if\/5"/,
    ],
    [
      'a modest resize',
      {
        tool: 'pve_resize_disk',
        args: { node: 'pve1', vmid: 100, disk: 'scsi0', size: '+10G', confirm: true },
        target: LAB,
      },
      0,
      /"kind": "allow"[\s\S]*"counter": "resizes"/,
    ],
  ])('explains %s under the bundled policy', (_label, callJson, status, out) => {
    const r = run('explain', 'policy.json', JSON.stringify(callJson));
    expect(r.out).toMatch(out);
    expect(r.status).toBe(status);
  });

  it('refuses arguments the tool itself would refuse', () => {
    const r = run(
      'explain',
      'policy.json',
      JSON.stringify({ tool: 'pve_create_qemu_vm', args: { node: '../x' } }),
    );
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/- node: must be a Proxmox node name/);
  });
});

describe('npm run policy (the script)', () => {
  it('prints the report on stdout and exits 0 for a valid policy or an allowed call', () => {
    const check = npmRun('check', 'policy.json');
    expect(check.status).toBe(0);
    expect(check.stdout).toMatch(/^policy\.json: valid \(default deny/);
    const allowed = npmRun('explain', 'policy.json', '{"tool":"pve_list_vms"}');
    expect(allowed.status).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({ kind: 'allow' });
  });

  it('exits 3 for a refused call, 1 for an invalid policy (errors on stderr), 2 for a usage error', () => {
    const refused = npmRun(
      'explain',
      'policy.json',
      '{"tool":"pve_api_request","args":{"method":"GET","path":"/version"}}',
    );
    expect(refused.status).toBe(3);
    expect(JSON.parse(refused.stdout)).toMatchObject({ kind: 'deny' });
    const invalid = npmRun('check', file('script-bad.json', { version: '2' }));
    expect(invalid.status).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(invalid.stderr).toMatch(/invalid policy/);
    const usage = npmRun('lint', 'policy.json');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/^usage: npm run policy -- check/);
  });

  it('refuses a call that is not JSON, or not an object naming a tool, as a usage error', () => {
    const notJson = npmRun('explain', 'policy.json', '{tool:');
    expect(notJson.status).toBe(2);
    expect(notJson.stderr).toMatch(/^the call is not JSON/);
    expect(notJson.stderr).not.toMatch(/at JSON\.parse|\.ts:\d+/);
    expect(run('explain', 'policy.json', '[1]')).toEqual({
      status: 2,
      out: 'the call must be a JSON object with a "tool" name, e.g. {"tool":"pve_list_vms"}',
    });
  });
});
