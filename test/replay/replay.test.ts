// replayPolicy: a candidate policy against recorded calls as the audit trail keeps them (parsed
// by the tool, property strings as their text, sensitive values redacted and long strings cut by
// the real redactArgs), with real tools and real compiled policies. Every list is asserted whole.

import { describe, expect, it } from 'vitest';
import { NOT_STORED_TOO_DEEP, REDACTED, redactAll, redactArgs } from '../../src/audit/canonical';
import { INHERITED_KEY } from '../../src/audit/record';
import type { Identity } from '../../src/core/identity';
import { evaluatePolicy } from '../../src/policy/evaluate';
import { loadPolicy, type CompiledPolicy } from '../../src/policy/load';
import { UnknownReached, UnknownValue, unknownList } from '../../src/policy/unknown';
import { isPropertyValue } from '../../src/core/property-value';
import {
  replayPolicy,
  type ReplayChange,
  type ReplayRecord,
  type ReplayReport,
  type ReplayTool,
} from '../../src/replay/replay';
import { EARLIER_CALLS } from '../../src/replay/slots';
import { TOOL_CATALOG, TOOLS } from '../../src/tools';
import { SCOPES } from '../../src/core/scopes';

const CREATE = 'pve_create_qemu_vm';
const LIST = 'pve_list_vms';
const API = 'pve_api_request';
const CONFIG = 'pve_set_vm_config';
const CLONE = 'pve_clone_vm';
const TOOL_MAP: ReadonlyMap<string, ReplayTool> = new Map(TOOLS.map((t) => [t.name, t]));

function policy(doc: object): CompiledPolicy {
  const result = loadPolicy({ version: '1', default: 'deny', ...doc }, TOOL_CATALOG);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.policy;
}

const T0 = Date.parse('2026-11-30T12:00:00.000Z');
const at = (seconds: number): number => T0 + seconds * 1000;

/** A record's `args`, made as run-call.ts makes them: parsed, shown as text, redacted. */
function stored(
  tool: string,
  raw: Record<string, unknown>,
  sensitive: string[],
  inherited?: Record<string, unknown>,
): Record<string, unknown> {
  const spec = TOOLS.find((t) => t.name === tool);
  if (!spec) throw new Error(`no tool ${tool}`);
  const parsed = spec.input.parse(raw) as Record<string, unknown>;
  const shown = Object.fromEntries(
    Object.entries(parsed)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, isPropertyValue(v) ? v.text : v]),
  );
  return redactArgs(inherited ? { ...shown, [INHERITED_KEY]: inherited } : shown, sensitive);
}

let ids = 0;
type RowOptions = Partial<ReplayRecord> & {
  sensitive?: string[];
  inherited?: Record<string, unknown>;
};

/** One audit row: alice through grant g1 in session s1, allowed, unless `over` says otherwise. */
function row(
  request_id: string,
  tool: string,
  raw: Record<string, unknown>,
  { sensitive = [], inherited, ...over }: RowOptions = {},
): ReplayRecord {
  return {
    id: ++ids,
    ts: T0,
    request_id,
    user_id: 'u-alice',
    user_email: 'alice@example.com',
    client_id: 'c1',
    grant_id: 'g1',
    session: 's1',
    tool,
    args: stored(tool, raw, sensitive, inherited),
    decision: 'allow',
    rule: null,
    approval_channel: null,
    approval_id: null,
    user_groups: [],
    ...over,
  };
}

/** Each listed call as [request id, before, after, after's rule]. */
const brief = (report: ReplayReport): [string, string, string, string | null][] =>
  report.changed.map((c) => [c.request_id, c.before.decision, c.after.decision, c.after.rule]);

const replay = (candidate: CompiledPolicy, records: ReplayRecord[]): ReplayReport =>
  replayPolicy(candidate, records, TOOL_MAP);

const NODE = { node: 'pve1' };
const NET = (bridge: string): string => `virtio,bridge=${bridge}`;

describe('replayPolicy', () => {
  it('lists exactly the calls a stricter draft refuses, by a field of a property string', () => {
    const records = [
      row('a', CREATE, { ...NODE, net0: NET('vmbr0'), confirm: true }, { ts: at(0) }),
      row('b', CREATE, { ...NODE, net0: NET('vmbr1'), confirm: true }, { ts: at(1) }),
      row('c', CREATE, { ...NODE, confirm: true }, { ts: at(2) }),
      row('d', LIST, {}, { ts: at(3) }),
      row(
        'e',
        CREATE,
        { ...NODE, net0: 'e1000,bridge=vmbr9', confirm: true },
        { ts: at(4), decision: 'deny', rule: '/tools/pve_create_qemu_vm/deny_if/0' },
      ),
    ];
    const draft = policy({
      tools: {
        [LIST]: {},
        [CREATE]: {
          deny_if: [{ path: 'args.net0.bridge', op: 'neq', value: 'vmbr0', reason: 'vmbr0 only.' }],
        },
      },
    });
    const expected: ReplayReport = {
      calls: 5,
      changed: [
        {
          request_id: 'b',
          ts: at(1),
          user: 'alice@example.com',
          tool: CREATE,
          before: { decision: 'allow', rule: null },
          after: {
            decision: 'deny',
            rule: '/tools/pve_create_qemu_vm/deny_if/0',
            reason: 'vmbr0 only.',
          },
        },
      ],
      totals: {
        replayed: 5,
        skipped: 0,
        unchanged: 4,
        changed: 1,
        unknown: 0,
        by_change: { 'allow→deny': 1 },
      },
    };
    expect(replay(draft, records)).toEqual(expected);
  });

  it('lists exactly the calls a laxer draft would allow', () => {
    const records = [
      row('a', LIST, {}, { ts: at(0) }),
      row(
        'b',
        CREATE,
        { ...NODE, memory: 65536, confirm: true },
        { ts: at(1), decision: 'deny', rule: '/tools/pve_create_qemu_vm/deny_if/0' },
      ),
      row('c', CREATE, { ...NODE, memory: 2048, confirm: true }, { ts: at(2) }),
      row(
        'd',
        'pve_delete_vm',
        { ...NODE, vmid: 100, confirm: true },
        { ts: at(3), decision: 'deny', rule: '(default deny)' },
      ),
      row(
        'e',
        'pve_start_vm',
        { ...NODE, vmid: 100, confirm: true },
        { ts: at(4), decision: 'deny', rule: '(default deny)', user_email: null },
      ),
    ];
    const draft = policy({
      tools: {
        [LIST]: {},
        [CREATE]: { deny_if: [{ path: 'args.memory', op: 'gt', value: 131072 }] },
        pve_start_vm: {},
      },
    });
    const report = replay(draft, records);
    expect(report.changed).toEqual([
      {
        request_id: 'b',
        ts: at(1),
        user: 'alice@example.com',
        tool: CREATE,
        before: { decision: 'deny', rule: '/tools/pve_create_qemu_vm/deny_if/0' },
        after: { decision: 'allow', rule: null },
      },
      {
        request_id: 'e',
        ts: at(4),
        user: 'u-alice',
        tool: 'pve_start_vm',
        before: { decision: 'deny', rule: '(default deny)' },
        after: { decision: 'allow', rule: null },
      },
    ] satisfies ReplayChange[]);
    expect(report.totals).toEqual({
      replayed: 5,
      skipped: 0,
      unchanged: 3,
      changed: 2,
      unknown: 0,
      by_change: { 'deny→allow': 2 },
    });
  });

  it('counts a guest limit per guest, across people: the second reboot of 102 is limited, of 100 not', () => {
    const reboot = (id: string, s: number, vmid: number, over: RowOptions = {}): ReplayRecord =>
      row(id, 'pve_reboot_vm', { node: 'pve1', vmid, confirm: true }, { ts: at(s), ...over });
    const bob = { user_id: 'u-bob', user_email: 'bob@example.com', grant_id: 'g2', session: 's2' };
    const LIMIT = '/tools/pve_reboot_vm/limits/0';
    const draft = policy({
      tools: {
        pve_reboot_vm: {
          limits: [{ counter: 'reboots', window: 'hour', max: 1, scope: 'guest' }],
        },
      },
    });
    const report = replay(draft, [
      reboot('a', 5, 102),
      reboot('b', 15, 102, bob),
      reboot('c', 25, 100, bob),
    ]);
    expect(report.changed.map((c) => [c.request_id, c.after.decision, c.after.rule])).toEqual([
      ['b', 'limited', LIMIT],
    ]);
  });

  it('judges args.cluster as the call had it: a record without one was the default cluster', () => {
    const reboot = (id: string, s: number, cluster?: string): ReplayRecord => {
      const r = row(id, 'pve_reboot_vm', { node: 'pve1', vmid: 100, confirm: true }, { ts: at(s) });
      return cluster ? { ...r, args: { ...r.args, cluster } } : r;
    };
    const draft = policy({
      tools: {
        pve_reboot_vm: {
          require: [{ path: 'args.cluster', op: 'eq', value: 'lab' }],
        },
      },
    });
    const records = [reboot('one', 5), reboot('lab', 10, 'lab'), reboot('prod', 15, 'prod')];
    // One cluster, lab: the record without a cluster is lab's.
    expect(brief(replayPolicy(draft, records.slice(0, 1), TOOL_MAP, 'lab'))).toEqual([]);
    expect(brief(replayPolicy(draft, records.slice(0, 1), TOOL_MAP, 'default'))).toEqual([
      ['one', 'allow', 'deny', '/tools/pve_reboot_vm/require/0'],
    ]);
    // Two clusters: each record names its own.
    expect(brief(replayPolicy(draft, records.slice(1), TOOL_MAP, 'lab'))).toEqual([
      ['prod', 'allow', 'deny', '/tools/pve_reboot_vm/require/0'],
    ]);
    // target.cluster is the same cluster, known from the record whether or not it kept facts.
    const onTarget = policy({
      tools: {
        pve_reboot_vm: {
          deny_if: [{ path: 'target.cluster', op: 'eq', value: 'prod' }],
        },
      },
    });
    const onProd = replayPolicy(onTarget, records, TOOL_MAP, 'lab');
    expect(brief(onProd)).toEqual([['prod', 'allow', 'deny', '/tools/pve_reboot_vm/deny_if/0']]);
    // A change names the cluster its record names.
    expect(onProd.changed[0]?.cluster).toBe('prod');
    // And their guests are counted apart: only lab's second reboot of VM 100 is limited.
    const limitOnly = policy({
      tools: {
        pve_reboot_vm: {
          limits: [{ counter: 'reboots', window: 'hour', max: 1, scope: 'guest' }],
        },
      },
    });
    const again = [...records.slice(1), reboot('lab again', 20, 'lab')];
    expect(brief(replayPolicy(limitOnly, again, TOOL_MAP, 'lab'))).toEqual([
      ['lab again', 'allow', 'limited', '/tools/pve_reboot_vm/limits/0'],
    ]);
    // A limit for one cluster counts its calls only; the other cluster's pass uncounted.
    const prodOnly = policy({
      tools: {
        pve_reboot_vm: {
          limits: [
            { counter: 'reboots', window: 'hour', max: 1, scope: 'global', cluster: 'prod' },
          ],
        },
      },
    });
    const both = [...again, reboot('prod again', 25, 'prod')];
    expect(brief(replayPolicy(prodOnly, both, TOOL_MAP, 'lab'))).toEqual([
      ['prod again', 'allow', 'limited', '/tools/pve_reboot_vm/limits/0'],
    ]);
  });

  it('counts a limit in time order: the (max+1)th call in a window is limited, the next window starts again', () => {
    const create = (id: string, s: number, over: RowOptions = {}): ReplayRecord =>
      row(id, CREATE, { ...NODE, confirm: true }, { ts: at(s), ...over });
    const LIMIT = '/tools/pve_create_qemu_vm/limits/0';
    const records = [
      create('a', 5),
      create('b', 15),
      create('c', 25),
      create('d', 35),
      create('e', 65),
      create('f', 75, { decision: 'limited', rule: LIMIT }),
      create('g', 85, { decision: 'limited', rule: LIMIT }),
    ];
    const draft = policy({
      tools: {
        [CREATE]: {
          limits: [{ counter: 'creates', window: 'minute', max: 2, scope: 'user' }],
        },
      },
    });
    // Handed newest first: the replay still counts oldest first.
    const report = replay(draft, [...records].reverse());
    expect(report.changed.map((c) => [c.request_id, c.after])).toEqual([
      [
        'c',
        {
          decision: 'limited',
          rule: LIMIT,
          reason:
            'Rate limit reached: creates allows 2 calls per minute per user. Try again in 35 s.',
        },
      ],
      [
        'd',
        {
          decision: 'limited',
          rule: LIMIT,
          reason:
            'Rate limit reached: creates allows 2 calls per minute per user. Try again in 25 s.',
        },
      ],
      ['f', { decision: 'allow', rule: null }],
    ]);
    expect(report.totals).toEqual({
      replayed: 7,
      skipped: 0,
      unchanged: 4,
      changed: 3,
      unknown: 0,
      by_change: { 'allow→limited': 2, 'limited→allow': 1 },
    });
  });

  describe('limit scopes', () => {
    // Alice signs in twice (two user ids, her email in another case), in three sessions; Bob once.
    const records = [
      row('a', CREATE, { ...NODE, confirm: true }, { ts: at(5) }),
      row(
        'b',
        CREATE,
        { ...NODE, confirm: true },
        {
          ts: at(10),
          user_id: 'u-alice-oidc',
          user_email: 'Alice@Example.COM',
          grant_id: 'g2',
          session: 's2',
        },
      ),
      row('c', CREATE, { ...NODE, confirm: true }, { ts: at(15), session: 's3' }),
      row(
        'd',
        CREATE,
        { ...NODE, confirm: true },
        {
          ts: at(20),
          user_id: 'u-bob',
          user_email: 'bob@example.com',
          grant_id: 'g3',
          session: 's4',
        },
      ),
      row('e', CREATE, { ...NODE, confirm: true }, { ts: at(25) }),
    ];
    it.each([
      ['grant', ['c', 'e']],
      ['user', ['b', 'c', 'e']],
      ['session', ['e']],
      ['global', ['b', 'c', 'd', 'e']],
    ])('counts per %s', (scope, limited) => {
      const draft = policy({
        tools: { [CREATE]: { limits: [{ counter: 'one', window: 'minute', max: 1, scope }] } },
      });
      const report = replay(draft, records);
      expect(report.changed.map((c) => c.request_id)).toEqual(limited);
      expect(report.changed.every((c) => c.after.decision === 'limited')).toBe(true);
    });

    it('counts a client without sessions per grant for session limits', () => {
      const stateless = (id: string, s: number, grant: string): ReplayRecord =>
        row(
          id,
          CREATE,
          { ...NODE, confirm: true },
          { ts: at(s), session: 'stateless', grant_id: grant },
        );
      const draft = policy({
        tools: {
          [CREATE]: {
            limits: [
              { counter: 'one', window: 'minute', max: 1, scope: 'session' },
              { counter: 'one', window: 'minute', max: 2, scope: 'grant' },
            ],
          },
        },
      });
      const report = replay(draft, [
        stateless('a', 1, 'g1'),
        stateless('b', 2, 'g1'),
        stateless('c', 3, 'g2'),
      ]);
      // The grant's own counter of the same name does not share the session's slots.
      expect(brief(report)).toEqual([
        ['b', 'allow', 'limited', '/tools/pve_create_qemu_vm/limits/0'],
      ]);
    });
  });

  it('takes no slot for a preview, asks no approval of it, and keeps an approved call approved', () => {
    const create = (id: string, s: number, confirm: boolean, over: RowOptions = {}) =>
      row(id, CREATE, { ...NODE, confirm }, { ts: at(s), ...over });
    const records = [
      create('p1', 0, false),
      create('p2', 10, false),
      create('c1', 20, true, { approval_channel: 'web', approval_id: 'approval-web-1' }),
      create('c2', 30, true),
      create('c3', 40, true, { approval_channel: 'conversation', approval_id: '(conversation)' }),
      create('c4', 50, true, {
        decision: 'approval_required',
        rule: '/tools/pve_create_qemu_vm/action',
      }),
      create('p3', 60, false),
    ];
    const draft = policy({
      tools: {
        [CREATE]: {
          action: 'require_approval',
          reason: 'A person approves new VMs.',
          limits: [{ counter: 'creates', window: 'hour', max: 1, scope: 'grant' }],
        },
      },
    });
    const report = replay(draft, records);
    expect(report.changed.map((c) => [c.request_id, c.after])).toEqual([
      [
        'c2',
        {
          decision: 'approval_required',
          rule: '/tools/pve_create_qemu_vm/action',
          reason: 'A person approves new VMs.',
        },
      ],
      [
        'c3',
        {
          decision: 'limited',
          rule: '/tools/pve_create_qemu_vm/limits/0',
          reason:
            'Rate limit reached: creates allows 1 call per hour per grant. Try again in 3560 s.',
        },
      ],
    ]);
    expect(report.totals.by_change).toEqual({ 'allow→approval_required': 1, 'allow→limited': 1 });
    expect(report.totals.unchanged).toBe(5);
  });

  describe('a key redacted inside an object argument (params.site-secret)', () => {
    const records = [
      row(
        'a',
        API,
        {
          method: 'POST',
          path: '/nodes/pve1/qemu/100/config',
          params: { 'site-secret': 'abc', node: 'pve1' },
          confirm: true,
        },
        { sensitive: ['params.site-secret'] },
      ),
    ];
    const secret = { path: 'args.params.site-secret', op: 'eq', value: 'abc' };

    it('is stored redacted, the rest of the object as it was', () => {
      expect(records[0]!.args.params).toEqual({ 'site-secret': REDACTED, node: 'pve1' });
    });

    it.each([
      ['a rule on it: unknown', [secret], ['unknown', '/tools/pve_api_request/deny_if/0']],
      [
        'an earlier rule that decides: not unknown',
        [{ path: 'args.method', op: 'eq', value: 'POST' }, secret],
        ['deny', '/tools/pve_api_request/deny_if/0'],
      ],
      [
        'a rule on another key of the object: not unknown',
        [{ path: 'args.params.node', op: 'neq', value: 'pve1' }],
        null,
      ],
      [
        '`exists` on it (it was there): not unknown',
        [{ path: 'args.params.site-secret', op: 'exists', value: true }],
        ['deny', '/tools/pve_api_request/deny_if/0'],
      ],
      [
        'a rule on it for someone else: not unknown',
        [{ ...secret, principals: ['bob@example.com'] }],
        null,
      ],
    ])('%s', (_name, deny_if, expected) => {
      const report = replay(policy({ tools: { [API]: { deny_if } } }), records);
      expect(report.changed.map((c) => [c.after.decision, c.after.rule])).toEqual(
        expected ? [expected] : [],
      );
    });

    it('says which field the unknown decision needs, and counts it apart', () => {
      const report = replay(policy({ tools: { [API]: { deny_if: [secret] } } }), records);
      expect(report.changed[0]!.after).toEqual({
        decision: 'unknown',
        rule: '/tools/pve_api_request/deny_if/0',
        reason:
          '/tools/pve_api_request/deny_if/0 needs args.params.site-secret, which is not known (redacted in the audit trail).',
        unknown: 'args.params.site-secret',
      });
      expect(report.totals).toEqual({
        replayed: 1,
        skipped: 0,
        unchanged: 0,
        changed: 0,
        unknown: 1,
        by_change: { 'allow→unknown': 1 },
      });
    });
  });

  describe('a whole argument the record lost', () => {
    const prod = { path: 'args.description', op: 'regex', value: 'prod' };
    const redacted = row(
      'redacted',
      CREATE,
      { ...NODE, memory: 8192, description: 'prod db', confirm: true },
      { sensitive: ['description'], ts: at(1) },
    );
    const cut = row(
      'cut',
      CREATE,
      { ...NODE, memory: 1024, description: `${'x'.repeat(1100)} prod`, confirm: true },
      { ts: at(2) },
    );

    it('is unknown to a rule that reads it: redacted, or cut', () => {
      expect(cut.args.description).toMatch(/…\[cut 105 chars\]$/);
      const report = replay(policy({ tools: { [CREATE]: { deny_if: [prod] } } }), [redacted, cut]);
      expect(report.changed.map((c) => [c.request_id, c.after.unknown, c.after.reason])).toEqual([
        [
          'redacted',
          'args.description',
          '/tools/pve_create_qemu_vm/deny_if/0 needs args.description, which is not known (redacted in the audit trail).',
        ],
        [
          'cut',
          'args.description',
          '/tools/pve_create_qemu_vm/deny_if/0 needs args.description, which is not known (cut in the audit trail).',
        ],
      ]);
    });

    it('is not unknown where an earlier rule decides, or no rule reads it', () => {
      const memoryFirst = policy({
        tools: {
          [CREATE]: { deny_if: [{ path: 'args.memory', op: 'gt', value: 4096 }, prod] },
        },
      });
      expect(brief(replay(memoryFirst, [redacted, cut]))).toEqual([
        ['redacted', 'allow', 'deny', '/tools/pve_create_qemu_vm/deny_if/0'],
        ['cut', 'allow', 'unknown', '/tools/pve_create_qemu_vm/deny_if/1'],
      ]);
      const memoryOnly = policy({
        tools: { [CREATE]: { deny_if: [{ path: 'args.memory', op: 'gt', value: 65536 }] } },
      });
      expect(replay(memoryOnly, [redacted, cut]).changed).toEqual([]);
    });

    it('is unknown to whether the call was a preview, where that matters', () => {
      const hidden = row('a', CREATE, { ...NODE, confirm: true }, { sensitive: ['confirm'] });
      expect(hidden.args.confirm).toBe(REDACTED);
      const approval = policy({ tools: { [CREATE]: { action: 'require_approval' } } });
      expect(replay(approval, [hidden]).changed.map((c) => c.after)).toEqual([
        {
          decision: 'unknown',
          rule: '/tools/pve_create_qemu_vm/action',
          reason:
            '/tools/pve_create_qemu_vm/action needs args.confirm, which is not known (redacted in the audit trail).',
          unknown: 'args.confirm',
        },
      ]);
      // No approval asked, no limit: a preview or not, it is allowed.
      expect(replay(policy({ tools: { [CREATE]: {} } }), [hidden]).changed).toEqual([]);
    });
  });

  describe('an object argument of property strings (pve_set_vm_config config)', () => {
    const record = row(CONFIG, CONFIG, {
      ...NODE,
      vmid: 100,
      config: { net0: NET('vmbr1'), cipassword: 'hunter22', memory: 4096 },
      confirm: true,
    });

    it('is stored as text with its built-in secret redacted', () => {
      expect(record.args.config).toEqual({
        net0: 'virtio,bridge=vmbr1',
        cipassword: REDACTED,
        memory: 4096,
      });
    });

    it.each([
      ['args.config.net0.bridge', { op: 'neq', value: 'vmbr0' }, 'deny'],
      ['args.config.memory', { op: 'gt', value: 2048 }, 'deny'],
      ['args.config.cipassword', { op: 'regex', value: '^hunter' }, 'unknown'],
      ['args.config.*', { op: 'gt', value: 2, aggregate: 'count' }, 'deny'],
      ['args.config.*', { op: 'gt', value: 3, aggregate: 'count' }, null],
    ])('judges %s %j after reading it back: %s', (path, rest, decision) => {
      const draft = policy({ tools: { [CONFIG]: { deny_if: [{ path, ...rest }] } } });
      expect(replay(draft, [record]).changed.map((c) => c.after.decision)).toEqual(
        decision ? [decision] : [],
      );
    });
  });

  it('judges what a clone inherits under its own arguments', () => {
    const inherited = { memory: 2048, cores: 2, sockets: 1, disk_gib: 32 };
    const records = [
      row(
        'from-source',
        CLONE,
        { ...NODE, source_vmid: 9000, newid: 101, confirm: true },
        { inherited: { ...inherited, net0: NET('vmbr1') } },
      ),
      row(
        'own-nic',
        CLONE,
        { ...NODE, source_vmid: 9000, newid: 102, net0: NET('vmbr0'), confirm: true },
        { inherited },
      ),
    ];
    const bridge = policy({
      tools: { [CLONE]: { deny_if: [{ path: 'args.net0.bridge', op: 'neq', value: 'vmbr0' }] } },
    });
    expect(brief(replay(bridge, records))).toEqual([
      ['from-source', 'allow', 'deny', '/tools/pve_clone_vm/deny_if/0'],
    ]);
    const disks = policy({
      tools: { [CLONE]: { deny_if: [{ path: 'args.disk_gib', op: 'gt', value: 16 }] } },
    });
    expect(brief(replay(disks, records)).map(([id, , after]) => [id, after])).toEqual([
      ['from-source', 'deny'],
      ['own-nic', 'deny'],
    ]);
  });

  it("is unknown where a token's scope decides and the record predates scopes", () => {
    const guestClients = policy({
      tools: {
        [CREATE]: {
          deny_if: [
            { path: 'args.memory', op: 'gt', value: 4096, principals: ['scope:pve:guest'] },
          ],
        },
      },
    });
    const create = (id: string, user_scopes?: string[] | null): ReplayRecord =>
      row(id, CREATE, { ...NODE, memory: 8192, confirm: true }, { user_groups: [], user_scopes });
    const report = replay(guestClients, [
      create('old', undefined),
      create('insider', ['pve:provision', 'pve:guest']),
      create('provisioner', ['pve:provision']),
    ]);
    expect(report.changed.map((c) => [c.request_id, c.after.decision, c.after.unknown])).toEqual([
      ['old', 'unknown', 'user.scopes'],
      ['insider', 'deny', undefined],
    ]);
    expect(report.changed[0]!.after.reason).toBe(
      "/tools/pve_create_qemu_vm/deny_if/0 needs user.scopes, which is not known (the record predates the recording of the token's scopes).",
    );
  });

  it('is unknown where a user.scopes condition decides and the record predates scopes', () => {
    const noGuests = policy({
      tools: {
        [CREATE]: { deny_if: [{ path: 'user.scopes', op: 'contains', value: 'pve:guest' }] },
      },
    });
    const create = (id: string, user_scopes?: string[]): ReplayRecord =>
      row(id, CREATE, { ...NODE, memory: 1024, confirm: true }, { user_groups: [], user_scopes });
    const report = replay(noGuests, [
      create('old'),
      create('insider', ['pve:provision', 'pve:guest']),
      create('provisioner', ['pve:provision']),
    ]);
    expect(report.changed.map((c) => [c.request_id, c.after.decision, c.after.unknown])).toEqual([
      ['old', 'unknown', 'user.scopes'],
      ['insider', 'deny', undefined],
    ]);
  });

  it('judges an except: scope entry only where the scopes are known, whatever the groups', () => {
    const exempt = policy({
      tools: {
        [CREATE]: {
          deny_if: [
            { path: 'args.memory', op: 'gt', value: 4096, except: ['scope:pve:provision'] },
          ],
        },
      },
    });
    const create = (
      id: string,
      user_scopes: string[] | undefined,
      user_groups: string[] | undefined,
    ): ReplayRecord =>
      row(id, CREATE, { ...NODE, memory: 8192, confirm: true }, { user_groups, user_scopes });
    const report = replay(exempt, [
      create('no-scopes', undefined, []),
      create('groups-lost-exempt', ['pve:provision'], undefined),
      create('groups-lost-not-exempt', ['pve:read'], undefined),
    ]);
    expect(report.changed.map((c) => [c.request_id, c.after.decision, c.after.unknown])).toEqual([
      ['no-scopes', 'unknown', 'user.scopes'],
      ['groups-lost-not-exempt', 'deny', undefined],
    ]);
  });

  describe('records from before groups were recorded', () => {
    const create = (id: string, memory: number, user_groups?: string[] | null): ReplayRecord =>
      row(id, CREATE, { ...NODE, memory, confirm: true }, { user_groups });
    const interns = policy({
      tools: {
        [CREATE]: {
          deny_if: [{ path: 'args.memory', op: 'gt', value: 4096, principals: ['group:interns'] }],
        },
      },
    });

    it('are unknown where a group decides, decided where it cannot matter', () => {
      const report = replay(interns, [
        create('old-big', 8192, undefined),
        create('old-small', 1024, undefined),
        create('intern', 8192, ['interns']),
        create('staff', 8192, []),
        create('null-groups', 8192, null),
      ]);
      expect(report.changed.map((c) => [c.request_id, c.after.decision, c.after.unknown])).toEqual([
        ['old-big', 'unknown', 'user.groups'],
        ['intern', 'deny', undefined],
        ['null-groups', 'unknown', 'user.groups'],
      ]);
      expect(report.changed[0]!.after.reason).toBe(
        '/tools/pve_create_qemu_vm/deny_if/0 needs user.groups, which is not known (the record predates group recording).',
      );
    });

    it('are decided where the person is named, whatever their groups', () => {
      const named = policy({
        tools: {
          [CREATE]: {
            deny_if: [
              {
                path: 'args.memory',
                op: 'gt',
                value: 4096,
                principals: ['group:interns', 'alice@example.com'],
              },
            ],
          },
        },
      });
      expect(brief(replay(named, [create('old', 8192, undefined)]))).toEqual([
        ['old', 'allow', 'deny', '/tools/pve_create_qemu_vm/deny_if/0'],
      ]);
    });

    it('are unknown to a limit a group is exempt from only once it is used up', () => {
      const exempt = policy({
        tools: {
          [CREATE]: {
            limits: [
              { counter: 'c', window: 'minute', max: 1, scope: 'grant', except: ['group:admins'] },
            ],
          },
        },
      });
      const report = replay(exempt, [
        create('first', 1024, undefined),
        create('second', 1024, undefined),
      ]);
      expect(report.changed.map((c) => [c.request_id, c.after.decision, c.after.unknown])).toEqual([
        ['second', 'unknown', 'user.groups'],
      ]);
    });

    it('are unknown to user.groups, except whether it exists', () => {
      const rule = (op: string, value: unknown) =>
        policy({ tools: { [CREATE]: { deny_if: [{ path: 'user.groups', op, value }] } } });
      const old = [create('old', 1024, undefined)];
      expect(replay(rule('contains', 'interns'), old).changed.map((c) => c.after.decision)).toEqual(
        ['unknown'],
      );
      expect(replay(rule('exists', false), old).changed).toEqual([]);
    });
  });

  it('counts an unknown decision as maybe taking its slot: a later call it may have limited is unknown', () => {
    const secret = { path: 'args.params.site-secret', op: 'eq', value: 'abc' };
    const draft = policy({
      tools: {
        [API]: {
          deny_if: [secret],
          limits: [{ counter: 'raw', window: 'minute', max: 1, scope: 'grant' }],
        },
      },
    });
    const post = (id: string, s: number, params?: Record<string, unknown>): ReplayRecord =>
      row(
        id,
        API,
        { method: 'POST', path: '/cluster/options', confirm: true, ...(params && { params }) },
        { ts: at(s), sensitive: ['params.site-secret'] },
      );
    const report = replay(draft, [
      post('secret', 0, { 'site-secret': 'x' }),
      post('plain', 10),
      post('next-minute', 70),
    ]);
    expect(report.changed.map((c) => [c.request_id, c.after.decision, c.after.unknown])).toEqual([
      ['secret', 'unknown', 'args.params.site-secret'],
      ['plain', 'unknown', EARLIER_CALLS],
    ]);
    expect(report.changed[1]!.after.reason).toBe(
      'Earlier calls whose decision is unknown may have used up raw (1 per minute per grant).',
    );
  });

  it('skips what no policy decided, and counts it', () => {
    const list = (id: string, over: RowOptions): ReplayRecord => row(id, LIST, {}, over);
    const records = [
      { ...list('invalid-args', { decision: 'none' }), args: { node: NOT_STORED_TOO_DEEP } },
      list('approvals-down', { decision: 'deny', rule: '(approval store unavailable)' }),
      list('counters-down', { decision: 'deny', rule: '(counter store unavailable)' }),
      {
        ...list('broken-policy', { decision: 'deny', rule: '(invalid policy)' }),
        args: redactAll({ node: 'pve1' }),
      },
      list('listed', {}),
    ];
    const report = replay(policy({}), records);
    expect(brief(report)).toEqual([['listed', 'allow', 'deny', '(default deny)']]);
    expect(report).toMatchObject({
      calls: 5,
      totals: { replayed: 1, skipped: 4, unchanged: 0, changed: 1, unknown: 0 },
    });
  });

  it('replays the policy that decided the calls without a change: approvals given, refused, and spent then limited', () => {
    const asking = policy({
      tools: {
        [CREATE]: {
          action: 'require_approval',
          limits: [{ counter: 'creates', window: 'hour', max: 1, scope: 'grant' }],
        },
      },
    });
    const create = (id: string, s: number, over: RowOptions) =>
      row(id, CREATE, { ...NODE, confirm: true }, { ts: at(s), ...over });
    const rule = '/tools/pve_create_qemu_vm/action';
    const records = [
      create('asked', 0, { decision: 'approval_required', rule, approval_id: 'a1' }),
      // A person said no on the approval page; the retry with its id was refused.
      create('refused', 10, { decision: 'deny', rule, approval_id: 'a1' }),
      create('approved', 20, { approval_channel: 'web', approval_id: 'a2' }),
      // Approved, then the hour's one create was used up: refused by the limit.
      create('over', 30, {
        decision: 'limited',
        rule: '/tools/pve_create_qemu_vm/limits/0',
        approval_id: 'a3',
      }),
    ];
    const report = replay(asking, records);
    expect(brief(report)).toEqual([]);
    expect(report.totals).toMatchObject({ replayed: 4, unchanged: 4, changed: 0 });
  });

  it('reads no argument of a tool the server offers no more, and decides what needs none', () => {
    const gone: ReplayRecord = { ...row('gone', LIST, {}), tool: 'pve_gone', args: { x: 1 } };
    expect(brief(replay(policy({}), [gone]))).toEqual([
      ['gone', 'allow', 'deny', '(default deny)'],
    ]);
    expect(replay(policy({ default: 'allow' }), [gone]).changed).toEqual([]);
  });
});

describe('unknown values in the evaluator', () => {
  const ME: Identity = {
    userId: 'alice',
    groups: [],
    clientId: 'c',
    grantId: 'g',
    scopes: SCOPES,
  };
  const lost = new UnknownValue('args.config.scsi1', 'redacted in the audit trail');
  const decide = (deny_if: object[], config: Record<string, unknown>) =>
    evaluatePolicy(
      policy({ tools: { [CONFIG]: { deny_if } } }),
      { tool: CONFIG, args: { config } },
      ME,
      null,
      T0,
    );
  const disk = (size_gib: number) => ({ storage: 'local-lvm', size_gib });

  it.each([
    [
      'a * deny_if fires on a known value whatever the lost one holds',
      { path: 'args.config.*.size_gib', op: 'gt', value: 100 },
      { scsi0: disk(500), scsi1: lost },
      'deny',
    ],
    [
      'a * deny_if no known value fires needs the lost one',
      { path: 'args.config.*.size_gib', op: 'gt', value: 100 },
      { scsi0: disk(10), scsi1: lost },
      'unknown',
    ],
    [
      'a sum over a lost term is unknown',
      { path: 'args.config.*.size_gib', op: 'gt', value: 100, aggregate: 'sum' },
      { scsi0: disk(10), scsi1: lost },
      'unknown',
    ],
    [
      'a count of present keys counts a lost value (it was there)',
      { path: 'args.config.*', op: 'gt', value: 1, aggregate: 'count' },
      { scsi0: disk(10), scsi1: lost },
      'deny',
    ],
    [
      'a count of a field inside a lost value is unknown',
      { path: 'args.config.*.size_gib', op: 'gt', value: 1, aggregate: 'count' },
      { scsi0: disk(10), scsi1: lost },
      'unknown',
    ],
    [
      'a field through a lost parent is unknown',
      { path: 'args.config.scsi1.size_gib', op: 'gt', value: 100 },
      { scsi1: lost },
      'unknown',
    ],
  ])('%s', (_name, cond, config, expected) => {
    let outcome: string;
    try {
      outcome = decide([cond], config).kind;
    } catch (err) {
      if (!(err instanceof UnknownReached)) throw err;
      expect(err.rule).toBe('/tools/pve_set_vm_config/deny_if/0');
      expect(err.unknown).toBe(lost);
      outcome = 'unknown';
    }
    expect(outcome).toBe(expected);
  });

  it('judges a group principal on groups nobody recorded as unknown, named people as known', () => {
    const who: Identity = {
      ...ME,
      groups: unknownList(new UnknownValue('user.groups', 'not recorded')),
    };
    const limited = (except: string[]) =>
      evaluatePolicy(
        policy({
          tools: {
            [LIST]: { limits: [{ counter: 'l', window: 'hour', max: 1, scope: 'user', except }] },
          },
        }),
        { tool: LIST, args: {} },
        who,
        null,
        T0,
      );
    expect(() => limited(['group:admins'])).toThrow(UnknownReached);
    expect(limited(['alice', 'group:admins'])).toEqual({ kind: 'allow', limits: [] });
    expect(limited(['bob'])).toMatchObject({ kind: 'allow', limits: [{ counter: 'l' }] });
  });
});
