// The pure policy engine, table by table: load errors with JSON pointers, every action,
// operator, principal filter, scope and window edge. `now` is always passed in.

import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/core/identity';
import { evaluatePolicy, isListed, readingKey, type Decision } from '../../src/policy/evaluate';
import { loadPolicy, type CompiledPolicy } from '../../src/policy/load';
import { retryAfterSeconds, windowEnd, windowStart } from '../../src/policy/windows';
import { TOOL_CATALOG } from '../../src/tools';
import { SCOPES } from '../../src/core/scopes';

const CREATE = 'pve_create_qemu_vm';
const LIST = 'pve_list_vms';

function policy(doc: object): CompiledPolicy {
  const result = loadPolicy({ version: '1', ...doc }, TOOL_CATALOG);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.policy;
}

function who(userId = 'alice', groups: string[] = [], email?: string): Identity {
  return {
    userId,
    groups,
    email,
    clientId: 'c1',
    grantId: `g-${userId}`,
    scopes: SCOPES,
  };
}

const at = (iso: string): number => Date.parse(iso);
const NOON = at('2026-11-30T12:00:30.000Z');

function decide(
  p: CompiledPolicy,
  tool: string,
  args: Record<string, unknown> = {},
  identity = who(),
  readings: Map<string, number> | null = null,
  now = NOON,
): Decision {
  return evaluatePolicy(p, { tool, args }, identity, readings, now);
}

describe('loadPolicy', () => {
  it('loads the PolicyLayer seed rule unchanged', () => {
    const seed = {
      version: '1',
      default: 'deny',
      tools: {
        [CREATE]: {
          limits: [
            { counter: 'pve_create_qemu_vm_rate', window: 'minute', max: 30, scope: 'grant' },
          ],
        },
      },
    };
    expect(loadPolicy(seed, TOOL_CATALOG).ok).toBe(true);
  });

  it('reports every error at once, each with its JSON pointer', () => {
    const result = loadPolicy(
      {
        version: '2',
        default: 'maybe',
        hide: ['pve_nope'],
        tools: {
          pve_list_vm: {},
          [CREATE]: {
            action: 'allow',
            approvers: ['bob'],
            sensitive: ['password'],
            deny_if: [
              { path: 'args.memroy', op: 'gt', value: 1 },
              { path: 'args.memory', op: 'gt', value: '1' },
              { path: 'args.name', op: 'regex', value: '(' },
              { path: 'args.node', op: 'in', value: 'pve1' },
              { path: 'env.SECRET', op: 'exists', value: true },
              { path: 'user.password', op: 'eq', value: 'x' },
              { path: 'args.node', op: 'like', value: 'x' },
              { path: 'args.scsi0.size_gb', op: 'gt', value: 1 },
              { path: 'args.net0.brige', op: 'eq', value: 'vmbr0' },
              { path: 'args.memory.mb', op: 'gt', value: 1 },
              { path: 'args.net0.bridge.x', op: 'eq', value: 'y' },
            ],
            limits: [
              { counter: 'a', window: 'week', max: -1, scope: 'tenant' },
              { counter: 'b', window: 'hour', max: 1, scope: 'grant' },
              { counter: 'b', window: 'day', max: 1, scope: 'grant' },
            ],
            extra: true,
          },
        },
      },
      TOOL_CATALOG,
    );
    expect(result.ok).toBe(false);
    const pointers = !result.ok ? result.errors.map((e) => e.pointer) : [];
    expect(pointers).toEqual(
      expect.arrayContaining([
        '/version',
        '/default',
        '/hide/0',
        '/tools/pve_list_vm',
        `/tools/${CREATE}`,
        `/tools/${CREATE}/approvers`,
        `/tools/${CREATE}/sensitive/0`,
        `/tools/${CREATE}/deny_if/0/path`,
        `/tools/${CREATE}/deny_if/1/value`,
        `/tools/${CREATE}/deny_if/2/value`,
        `/tools/${CREATE}/deny_if/3/value`,
        `/tools/${CREATE}/deny_if/4/path`,
        `/tools/${CREATE}/deny_if/5/path`,
        `/tools/${CREATE}/deny_if/6/op`,
        `/tools/${CREATE}/deny_if/7/path`,
        `/tools/${CREATE}/deny_if/8/path`,
        `/tools/${CREATE}/deny_if/9/path`,
        `/tools/${CREATE}/deny_if/10/path`,
        `/tools/${CREATE}/limits/0/window`,
        `/tools/${CREATE}/limits/0/max`,
        `/tools/${CREATE}/limits/0/scope`,
        `/tools/${CREATE}/limits/2/counter`,
      ]),
    );
    const messages = !result.ok
      ? result.errors.map((e) => `${e.pointer}: ${e.message}`).join('\n')
      : '';
    expect(messages).toMatch(/\/tools\/pve_create_qemu_vm: unknown key\(s\): extra/);
    expect(messages).toMatch(/unknown argument "memroy"; known: .*memory/);
    expect(messages).toMatch(/invalid regex/);
    expect(messages).toMatch(/"scsi0" has no field "size_gb"; known: .*size_gib/);
    expect(messages).toMatch(/argument "memory" has no fields to reach into/);
  });

  it.each([[null], [[]], ['policy'], [{}]])(
    'refuses a document that is not a policy: %j',
    (doc) => {
      expect(loadPolicy(doc, TOOL_CATALOG).ok).toBe(false);
    },
  );
});

describe('actions and defaults', () => {
  it.each<[string, object, string, Decision['kind'], string]>([
    ['default allow lets an unlisted tool through', { default: 'allow' }, LIST, 'allow', ''],
    ['default deny refuses an unlisted tool', { default: 'deny' }, LIST, 'deny', '(default deny)'],
    [
      'a tool listed with {} under default deny is allowed',
      { default: 'deny', tools: { [LIST]: {} } },
      LIST,
      'allow',
      '',
    ],
    [
      'hide denies even a listed tool',
      { hide: [LIST], tools: { [LIST]: {} } },
      LIST,
      'deny',
      '(hidden)',
    ],
    ['hide * denies everything', { hide: ['*'] }, CREATE, 'deny', '(hidden)'],
    [
      'action deny',
      { tools: { [CREATE]: { action: 'deny', reason: 'Not here.' } } },
      CREATE,
      'deny',
      `/tools/${CREATE}/action`,
    ],
    [
      'action require_approval',
      { tools: { [CREATE]: { action: 'require_approval' } } },
      CREATE,
      'approval_required',
      `/tools/${CREATE}/action`,
    ],
    ['action allow', { tools: { [CREATE]: { action: 'allow' } } }, CREATE, 'allow', ''],
  ])('%s', (_label, doc, tool, kind, rule) => {
    const d = decide(policy(doc), tool);
    expect(d.kind).toBe(kind);
    if (d.kind !== 'allow') expect(d.rule).toBe(rule);
  });

  it('carries the reason of a deny action to the agent', () => {
    const d = decide(
      policy({ tools: { [CREATE]: { action: 'deny', reason: 'Use the ticket queue.' } } }),
      CREATE,
    );
    expect(d).toMatchObject({ kind: 'deny', reason: 'Use the ticket queue.' });
  });

  it('lists only tools that are neither hidden nor denied by default', () => {
    expect(isListed(policy({ default: 'deny', tools: { [CREATE]: {} } }), LIST)).toBe(false);
    expect(isListed(policy({ default: 'deny', tools: { [CREATE]: {} } }), CREATE)).toBe(true);
    expect(isListed(policy({ hide: [CREATE] }), CREATE)).toBe(false);
    expect(isListed(policy({ tools: { [CREATE]: { action: 'deny' } } }), CREATE)).toBe(true);
  });
});

describe('operators', () => {
  const args = {
    node: 'pve1',
    memory: 4096,
    tags: ['web', 'prod'],
    net0: { model: 'virtio', bridge: 'vmbr0', firewall: true, tag: 20 },
    scsi0: { storage: 'local-lvm', size_gib: 32, new_disk: true },
  };
  it.each<[string, string, unknown, boolean | null]>([
    ['args.node', 'eq', 'pve1', true],
    ['args.node', 'eq', 'pve2', false],
    ['args.memory', 'eq', '4096', true],
    ['args.node', 'neq', 'pve2', true],
    ['args.node', 'in', ['pve1', 'pve2'], true],
    ['args.node', 'in', ['pve3'], false],
    ['args.net0.bridge', 'not_in', ['vmbr9'], true],
    ['args.net0.bridge', 'not_in', ['vmbr0'], false],
    ['args.memory', 'lt', 4096, false],
    ['args.memory', 'lte', 4096, true],
    ['args.memory', 'gt', 4095, true],
    ['args.memory', 'gte', 4097, false],
    ['args.scsi0.size_gib', 'gt', 31.5, true],
    ['args.node', 'regex', '^pve[0-9]$', true],
    ['args.memory', 'regex', '^4', false],
    ['args.net0.firewall', 'eq', true, true],
    ['args.tags', 'contains', 'prod', true],
    ['args.tags', 'contains', 'dev', false],
    ['args.node', 'contains', 've', true],
    ['args.net0', 'exists', true, true],
    ['args.ide2', 'exists', true, false],
    ['args.ide2', 'exists', false, true],
    ['args.ide2', 'eq', 'x', null],
    ['args.net0.mtu', 'lt', 1500, null],
  ])('%s %s %j → %s', (path, op, value, holds) => {
    const deny = policy({ tools: { [CREATE]: { deny_if: [{ path, op, value }] } } });
    const require = policy({ tools: { [CREATE]: { require: [{ path, op, value }] } } });
    // deny_if denies exactly when the condition holds; require whenever it does not: a field
    // the call leaves out (null) never fires a deny_if and always fails a require.
    expect(decide(deny, CREATE, args).kind).toBe(holds === true ? 'deny' : 'allow');
    expect(decide(require, CREATE, args).kind).toBe(holds === true ? 'allow' : 'deny');
  });

  it('refuses a size comparison on a value that is not a number, as a deny_if and as a require', () => {
    const args2 = { node: 'pve1' };
    expect(
      decide(
        policy({ tools: { [CREATE]: { deny_if: [{ path: 'args.node', op: 'gt', value: 1 }] } } }),
        CREATE,
        args2,
      ),
    ).toMatchObject({
      kind: 'deny',
      reason: 'Denied by policy: args.node is not a number, so the rule gt 1 cannot be checked.',
    });
    expect(
      decide(
        policy({ tools: { [CREATE]: { require: [{ path: 'args.node', op: 'gt', value: 1 }] } } }),
        CREATE,
        args2,
      ).kind,
    ).toBe('deny');
  });

  it('names the rule that fires and its reason', () => {
    const p = policy({
      tools: {
        [CREATE]: {
          deny_if: [
            { path: 'args.memory', op: 'gt', value: 8192, reason: 'Too big.' },
            { path: 'args.cores', op: 'gt', value: 4 },
          ],
          require: [{ path: 'args.net0.bridge', op: 'in', value: ['vmbr0'] }],
        },
      },
    });
    expect(decide(p, CREATE, { memory: 16384 })).toEqual({
      kind: 'deny',
      rule: `/tools/${CREATE}/deny_if/0`,
      reason: 'Too big.',
    });
    expect(decide(p, CREATE, { cores: 8 })).toMatchObject({
      rule: `/tools/${CREATE}/deny_if/1`,
      reason: 'Denied by policy: args.cores gt 4.',
    });
    expect(decide(p, CREATE, { net0: { bridge: 'vmbr1' } })).toMatchObject({
      rule: `/tools/${CREATE}/require/0`,
    });
  });

  it('applies a rule with `when` only to the calls its test fires on, and says so when it refuses', () => {
    const p = policy({
      tools: {
        [CREATE]: {
          deny_if: [
            {
              path: 'args.cores',
              op: 'gt',
              value: 2,
              when: { path: 'args.memory', op: 'lt', value: 2048 },
            },
          ],
          require: [
            {
              path: 'args.net0.bridge',
              op: 'eq',
              value: 'vmbr1',
              when: { path: 'user.groups', op: 'contains', value: 'lab' },
            },
          ],
        },
      },
    });
    // The deny_if is for small VMs only.
    expect(decide(p, CREATE, { memory: 1024, cores: 4 })).toEqual({
      kind: 'deny',
      rule: `/tools/${CREATE}/deny_if/0`,
      reason:
        'Denied by policy: args.cores gt 2 (the rule is for calls where args.memory lt 2048).',
    });
    expect(decide(p, CREATE, { memory: 4096, cores: 4 }).kind).toBe('allow');
    // Without what `when` tests, the rule is not for the call (as a deny_if would not fire).
    expect(decide(p, CREATE, { cores: 4 }).kind).toBe('allow');
    // The require binds the lab group alone.
    const lab = who('bob', ['lab']);
    expect(decide(p, CREATE, { net0: { bridge: 'vmbr0' } }, lab)).toMatchObject({
      rule: `/tools/${CREATE}/require/0`,
    });
    expect(decide(p, CREATE, { net0: { bridge: 'vmbr1' } }, lab).kind).toBe('allow');
    expect(decide(p, CREATE, { net0: { bridge: 'vmbr0' } }, who('carol', [])).kind).toBe('allow');
  });

  it('checks a `when` as it checks a condition, naming its pointer', () => {
    const result = loadPolicy(
      {
        version: '1',
        tools: {
          [CREATE]: {
            deny_if: [
              {
                path: 'args.cores',
                op: 'gt',
                value: 2,
                when: { path: 'args.nope', op: 'eq', value: 1 },
              },
              {
                path: 'args.cores',
                op: 'gt',
                value: 2,
                when: { path: 'args.name', op: 'regex', value: '(' },
              },
              {
                path: 'args.cores',
                op: 'gt',
                value: 2,
                when: {
                  path: 'args.cores',
                  op: 'gt',
                  value: 1,
                  when: { path: 'args.cores', op: 'gt', value: 0 },
                },
              },
            ],
          },
        },
      },
      TOOL_CATALOG,
    );
    expect(result.ok).toBe(false);
    const pointers = result.ok ? [] : result.errors.map((e) => e.pointer);
    expect(pointers).toEqual(
      expect.arrayContaining([
        `/tools/${CREATE}/deny_if/0/when/path`,
        `/tools/${CREATE}/deny_if/1/when/value`,
        `/tools/${CREATE}/deny_if/2/when`,
      ]),
    );
  });

  it("applies all_tools rules after the tool's own", () => {
    const p = policy({
      default: 'allow',
      all_tools: { require: [{ path: 'user.groups', op: 'contains', value: 'staff' }] },
      tools: { [CREATE]: { deny_if: [{ path: 'args.memory', op: 'gt', value: 1 }] } },
    });
    expect(decide(p, CREATE, { memory: 2 }, who('bob', []))).toMatchObject({
      rule: `/tools/${CREATE}/deny_if/0`,
    });
    expect(decide(p, LIST, {}, who('bob', []))).toMatchObject({ rule: '/all_tools/require/0' });
    expect(decide(p, LIST, {}, who('bob', ['staff'])).kind).toBe('allow');
  });
});

describe('principals', () => {
  const p = policy({
    tools: {
      [CREATE]: {
        deny_if: [
          { path: 'args.memory', op: 'gt', value: 8192, except: ['group:ops', 'root@example.com'] },
          { path: 'args.node', op: 'eq', value: 'pve3', principals: ['carol'] },
        ],
      },
    },
  });
  it.each<[string, Identity, Record<string, unknown>, Decision['kind']]>([
    ['a cap applies to everyone', who('bob'), { memory: 16384 }, 'deny'],
    ['except a group', who('bob', ['ops']), { memory: 16384 }, 'allow'],
    [
      'except a user by email, case-insensitive',
      who('u1', [], 'Root@Example.com'),
      { memory: 16384 },
      'allow',
    ],
    ['a rule limited to one user applies to them', who('carol'), { node: 'pve3' }, 'deny'],
    ['and not to others', who('dave'), { node: 'pve3' }, 'allow'],
  ])('%s', (_label, identity, args, kind) => {
    expect(decide(p, CREATE, args, identity).kind).toBe(kind);
  });

  it('filters limits by principal', () => {
    const q = policy({
      tools: {
        [LIST]: {
          limits: [
            {
              counter: 'c',
              window: 'minute',
              max: 1,
              scope: 'user',
              except: ['group:bots-exempt'],
            },
          ],
        },
      },
    });
    expect((decide(q, LIST, {}, who('a')) as { limits: unknown[] }).limits).toHaveLength(1);
    expect(
      (decide(q, LIST, {}, who('a', ['bots-exempt'])) as { limits: unknown[] }).limits,
    ).toHaveLength(0);
  });

  it("aims a rule at a scope of the caller's token (scope:pve:provision)", () => {
    const q = policy({
      tools: {
        [CREATE]: {
          deny_if: [
            {
              path: 'args.memory',
              op: 'gt',
              value: 4096,
              principals: ['scope:pve:guest'],
              reason: 'Clients reaching inside guests create small VMs only.',
            },
          ],
        },
      },
    });
    const provisioner = { ...who('p'), scopes: ['pve:read', 'pve:provision'] };
    const insider = { ...who('g'), scopes: ['pve:provision', 'pve:guest'] };
    expect(decide(q, CREATE, { memory: 8192 }, provisioner).kind).toBe('allow');
    expect(decide(q, CREATE, { memory: 8192 }, insider)).toMatchObject({
      kind: 'deny',
      reason: 'Clients reaching inside guests create small VMs only.',
    });
    // A person on a web page holds no token, so no scope: `scope:` names never match them.
    expect(decide(q, CREATE, { memory: 8192 }, { ...who('w'), scopes: [] }).kind).toBe('allow');
  });

  it("reads the token's scopes in a condition (user.scopes)", () => {
    const q = policy({
      tools: {
        [LIST]: {
          deny_if: [
            {
              path: 'user.scopes',
              op: 'contains',
              value: 'pve:raw',
              reason: 'Clients given the raw API do not list guests.',
            },
          ],
          require: [{ path: 'user.scopes', op: 'contains', value: 'pve:read' }],
        },
      },
    });
    expect(decide(q, LIST, {}, { ...who('r'), scopes: ['pve:read'] }).kind).toBe('allow');
    expect(decide(q, LIST, {}, { ...who('x'), scopes: ['pve:read', 'pve:raw'] })).toMatchObject({
      kind: 'deny',
      reason: 'Clients given the raw API do not list guests.',
    });
    expect(decide(q, LIST, {}, { ...who('o'), scopes: ['pve:operate'] }).kind).toBe('deny');
  });

  it('refuses to load a scope nobody can hold, or a scope among approvers', () => {
    const result = loadPolicy(
      {
        version: '1',
        tools: {
          [CREATE]: {
            action: 'require_approval',
            approvers: ['group:leads', 'scope:pve:read'],
            limits: [
              {
                counter: 'c',
                window: 'hour',
                max: 1,
                scope: 'grant',
                except: ['scope:pve:opertae'],
              },
            ],
          },
        },
      },
      TOOL_CATALOG,
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          pointer: `/tools/${CREATE}/approvers/1`,
          message: expect.stringContaining('approvers are people or groups'),
        }),
        expect.objectContaining({
          pointer: `/tools/${CREATE}/limits/0/except/0`,
          message:
            'unknown scope "pve:opertae": one of pve:read, pve:operate, pve:provision, pve:guest, pve:raw',
        }),
      ]),
    );
  });
});

describe('limits', () => {
  const doc = {
    tools: {
      [CREATE]: {
        limits: [
          { counter: 'per_minute', window: 'minute', max: 2, scope: 'grant' },
          { counter: 'per_day', window: 'day', max: 10, scope: 'user' },
        ],
      },
    },
    all_tools: { limits: [{ counter: 'all_calls', window: 'second', max: 5, scope: 'global' }] },
  };

  it('returns every applicable limit with its counter key and window', () => {
    const d = decide(policy(doc), CREATE);
    expect(d.kind).toBe('allow');
    const limits = d.kind === 'allow' ? d.limits : [];
    expect(limits.map((l) => [l.rule, l.scope, l.key, l.windowStart, l.windowEnd])).toEqual([
      [
        `/tools/${CREATE}/limits/0`,
        'grant',
        `${CREATE}/per_minute`,
        at('2026-11-30T12:00:00Z'),
        at('2026-11-30T12:01:00Z'),
      ],
      [
        `/tools/${CREATE}/limits/1`,
        'user',
        `${CREATE}/per_day`,
        at('2026-11-30T00:00:00Z'),
        at('2026-12-01T00:00:00Z'),
      ],
      [
        '/all_tools/limits/0',
        'global',
        '*/all_calls',
        at('2026-11-30T12:00:30Z'),
        at('2026-11-30T12:00:31Z'),
      ],
    ]);
  });

  it.each<[string, number, number, Decision['kind'], number | undefined]>([
    ['below the max', 1, 0, 'allow', undefined],
    ['at the max', 2, 0, 'limited', 30],
    ['over the max', 9, 0, 'limited', 30],
    ['the day counter full', 0, 10, 'limited', 43170],
  ])('with readings: %s', (_label, minute, day, kind, retry) => {
    const p = policy(doc);
    const first = decide(p, CREATE);
    const limits = first.kind === 'allow' ? first.limits : [];
    const readings = new Map([
      [readingKey(limits[0]!), minute],
      [readingKey(limits[1]!), day],
    ]);
    const d = decide(p, CREATE, {}, who(), readings);
    expect(d.kind).toBe(kind);
    if (d.kind === 'limited') expect(d.retry_after_s).toBe(retry);
  });

  it('a limit of 0 refuses every call', () => {
    const p = policy({
      tools: { [LIST]: { limits: [{ counter: 'off', window: 'hour', max: 0, scope: 'session' }] } },
    });
    expect(decide(p, LIST, {}, who(), new Map()).kind).toBe('limited');
  });

  it('readings of another window do not count', () => {
    const p = policy(doc);
    const earlier = decide(p, CREATE, {}, who(), null, at('2026-11-30T11:59:59.999Z'));
    const limits = earlier.kind === 'allow' ? earlier.limits : [];
    const stale = new Map([[readingKey(limits[0]!), 2]]);
    expect(decide(p, CREATE, {}, who(), stale).kind).toBe('allow');
  });
});

describe('calendar windows in UTC', () => {
  it.each<[string, 'second' | 'minute' | 'hour' | 'day', string, string, number]>([
    ['second', 'second', '2026-11-30T12:00:30.250Z', '2026-11-30T12:00:30.000Z', 1],
    ['minute start', 'minute', '2026-11-30T12:00:00.000Z', '2026-11-30T12:00:00.000Z', 60],
    ['minute last ms', 'minute', '2026-11-30T12:00:59.999Z', '2026-11-30T12:00:00.000Z', 1],
    ['hour', 'hour', '2026-11-30T12:59:00.000Z', '2026-11-30T12:00:00.000Z', 60],
    ['day just before midnight', 'day', '2026-11-30T23:59:59.000Z', '2026-11-30T00:00:00.000Z', 1],
    ['day at midnight', 'day', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', 86400],
    ['leap day', 'day', '2028-02-29T06:00:00.000Z', '2028-02-29T00:00:00.000Z', 64800],
  ])('%s', (_label, window, now, start, retry) => {
    expect(new Date(windowStart(window, at(now))).toISOString()).toBe(start);
    expect(windowEnd(window, at(now)) - windowStart(window, at(now))).toBe(
      { second: 1e3, minute: 6e4, hour: 36e5, day: 864e5 }[window],
    );
    expect(retryAfterSeconds(window, at(now))).toBe(retry);
  });
});

describe('failing closed', () => {
  it('a policy without `default` denies an unlisted tool, and loading it warns', () => {
    const result = loadPolicy({ version: '1', tools: { [CREATE]: {} } }, TOOL_CATALOG);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(decide(result.policy, LIST)).toEqual({
      kind: 'deny',
      rule: '(default deny)',
      reason: `Tool "${LIST}" is not allowed by policy.`,
    });
    expect(result.warnings).toEqual([
      {
        pointer: '/default',
        message: expect.stringContaining('every tool not listed under "tools" is denied'),
      },
    ]);
    const explicit = loadPolicy({ version: '1', default: 'deny', tools: {} }, TOOL_CATALOG);
    expect(explicit.ok && explicit.warnings).toEqual([]);
  });

  it('a require on user.email denies a person without an email, naming the rule', () => {
    const p = policy({
      default: 'allow',
      all_tools: { require: [{ path: 'user.email', op: 'regex', value: '@example\\.com$' }] },
    });
    expect(decide(p, LIST, {}, who('bob'))).toEqual({
      kind: 'deny',
      rule: '/all_tools/require/0',
      reason:
        'Denied by policy: user.email is required (it must satisfy regex "@example\\\\.com$") and this call has none.',
    });
    expect(decide(p, LIST, {}, who('bob', [], 'bob@example.com')).kind).toBe('allow');
    expect(decide(p, LIST, {}, who('eve', [], 'eve@evil.example')).kind).toBe('deny');
  });

  it('a require on an argument the call leaves out denies; a deny_if eq on a field it leaves out does not fire', () => {
    const p = policy({
      tools: {
        [CREATE]: {
          deny_if: [{ path: 'args.net0.tag', op: 'eq', value: 1 }],
          require: [{ path: 'args.pool', op: 'eq', value: 'agents' }],
        },
      },
    });
    expect(decide(p, CREATE, { pool: 'agents' }).kind).toBe('allow');
    expect(decide(p, CREATE, {})).toMatchObject({
      kind: 'deny',
      rule: `/tools/${CREATE}/require/0`,
    });
  });

  it('`exists: false` in a require is met by an absent field', () => {
    const p = policy({
      tools: { [CREATE]: { require: [{ path: 'args.ide2', op: 'exists', value: false }] } },
    });
    expect(decide(p, CREATE, {}).kind).toBe('allow');
    expect(decide(p, CREATE, { ide2: { iso: 'x' } }).kind).toBe('deny');
  });
});
