// Policy paths that reach inside object arguments (args.config.net0.bridge), free-key arguments
// (args.params.<key>) and `*` over every key (args.config.*.size_gib): what loads, what is a load
// error, how deny_if (one value) and require (every value) read a `*`, how a field that the
// thing carrying it lacks (a NIC without a bridge) is judged, and sums and counts over a `*`.

import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/core/identity';
import { evaluatePolicy } from '../../src/policy/evaluate';
import { loadPolicy, type CompiledPolicy, type ToolCatalog } from '../../src/policy/load';
import { policyView } from '../../src/policy/view';
import { propertyValue, type FieldValue } from '../../src/core/property-value';
import { SCOPES } from '../../src/core/scopes';

const CATALOG: ToolCatalog = {
  t: {
    node: null,
    net0: ['bridge', 'tag'],
    config: [
      'memory',
      'net0',
      'net0.bridge',
      'net1',
      'net1.bridge',
      'scsi1',
      'scsi1.size_gib',
      'scsi1.storage',
      'scsi2',
      'scsi2.size_gib',
      'scsi2.storage',
    ],
    params: ['*'],
    pool: null,
  },
  other: { node: null },
  exec: { node: null, command: ['#'], input_data: null },
};
const ME: Identity = {
  userId: 'alice',
  groups: [],
  clientId: 'c',
  grantId: 'g',
  scopes: SCOPES,
};

function load(rules: object): ReturnType<typeof loadPolicy> {
  return loadPolicy({ version: '1', default: 'deny', tools: { t: rules } }, CATALOG);
}

const messages = (result: ReturnType<typeof loadPolicy>): string =>
  result.ok ? '' : result.errors.map((e) => e.message).join('\n');

function compiled(rules: object): CompiledPolicy {
  const result = load(rules);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.policy;
}

/** The decision's rule, or 'allow'. */
function decide(
  p: CompiledPolicy,
  args: Record<string, unknown>,
  tool = 't',
  identity = ME,
): string {
  const d = evaluatePolicy(p, { tool, args: policyView(args) }, identity, null, 0);
  return d.kind === 'allow' ? 'allow' : d.rule;
}

/** The decision's reason (for a refusal). */
function reasonOf(p: CompiledPolicy, args: Record<string, unknown>): string {
  const d = evaluatePolicy(p, { tool: 't', args: policyView(args) }, ME, null, 0);
  return d.kind === 'deny' ? d.reason : d.kind;
}

const prop = (text: string, fields: Record<string, FieldValue>) => propertyValue(text, fields);

describe('loading paths into object arguments', () => {
  it.each([
    'args.config.memory',
    'args.config.net0.bridge',
    'args.config.*.bridge',
    'args.config.*.size_gib',
    'args.config.*',
    'args.params.vmid',
    'args.params.ha-state',
    'args.params.*',
    'args.net0.bridge',
  ])('accepts %s', (path) => {
    expect(load({ deny_if: [{ path, op: 'exists', value: true }] }).ok).toBe(true);
  });

  it.each<[string, RegExp]>([
    ['args.config.memroy', /"config" has no field "memroy"; known: memory, net0, net0\.bridge/],
    ['args.config.net0.brige', /"config" has no field "net0\.brige"/],
    ['args.config.net7.bridge', /"config" has no field "net7\.bridge"/],
    ['args.config.*.size_gb', /"config" has no field "\*\.size_gb"/],
    ['args.params.vm/id', /"params" has no field "vm\/id"/],
    ['args.params.a.b', /"params" has no field "a\.b"/],
    ['args.net0.bridge.x', /"net0" has no field "bridge\.x"/],
    ['args.node.x', /argument "node" has no fields to reach into/],
  ])('reports %s as a load error', (path, message) => {
    const result = load({ deny_if: [{ path, op: 'exists', value: true }] });
    expect(result.ok).toBe(false);
    expect(messages(result)).toMatch(message);
  });

  it('lists the first 40 known fields of an object with hundreds', () => {
    const many: ToolCatalog = {
      t: { config: Array.from({ length: 150 }, (_, i) => `k${String(i).padStart(3, '0')}`) },
    };
    const result = loadPolicy(
      {
        version: '1',
        tools: { t: { deny_if: [{ path: 'args.config.x', op: 'exists', value: true }] } },
      },
      many,
    );
    expect(messages(result)).toMatch(/k039, … \(150 in all\)/);
  });
});

describe('sensitive entries inside object arguments', () => {
  it.each(['params.encryption-key', 'params.site-secret', 'config.memory', 'node'])(
    'accepts %s',
    (entry) => {
      expect(load({ sensitive: [entry] }).ok).toBe(true);
    },
  );

  it.each<[string, RegExp]>([
    ['params.a.b', /"params" has no key "a\.b" to redact/],
    ['params.*', /"params" has no key "\*" to redact/],
    ['config.memroy', /"config" has no key "memroy" to redact/],
    ['node.x', /"node" has no key "x" to redact/],
    ['nope.x', /t has no argument "nope"/],
  ])('reports %s as a load error', (entry, message) => {
    const result = load({ sensitive: [entry] });
    expect(result.ok).toBe(false);
    expect(messages(result)).toMatch(message);
  });
});

describe('evaluating paths into object arguments', () => {
  const config = {
    memory: 4096,
    net0: prop('virtio,bridge=vmbr0', { model: 'virtio', bridge: 'vmbr0' }),
    net1: prop('virtio,bridge=vmbr1', { model: 'virtio', bridge: 'vmbr1' }),
    scsi1: prop('local-lvm:600', { storage: 'local-lvm', size_gib: 600 }),
  };

  it('reaches a key and a field of a property string inside config', () => {
    expect(
      decide(compiled({ deny_if: [{ path: 'args.config.memory', op: 'gt', value: 2048 }] }), {
        config,
      }),
    ).toBe('/tools/t/deny_if/0');
    expect(
      decide(
        compiled({ deny_if: [{ path: 'args.config.net0.bridge', op: 'eq', value: 'vmbr0' }] }),
        { config },
      ),
    ).toBe('/tools/t/deny_if/0');
    expect(
      decide(
        compiled({ deny_if: [{ path: 'args.config.net1.bridge', op: 'eq', value: 'vmbr0' }] }),
        { config },
      ),
    ).toBe('allow');
  });

  it('fires a deny_if with * when one value matches', () => {
    const p = compiled({ deny_if: [{ path: 'args.config.*.bridge', op: 'neq', value: 'vmbr1' }] });
    expect(decide(p, { config })).toBe('/tools/t/deny_if/0');
    expect(decide(p, { config: { net1: config.net1 } })).toBe('allow');
    // No NIC in the call: nothing to deny.
    expect(decide(p, { config: { memory: 1024 } })).toBe('allow');
  });

  it('meets a require with * only when every value matches, and not when there is none', () => {
    const p = compiled({ require: [{ path: 'args.config.*.bridge', op: 'eq', value: 'vmbr1' }] });
    expect(decide(p, { config })).toBe('/tools/t/require/0');
    expect(decide(p, { config: { net1: config.net1 } })).toBe('allow');
    expect(decide(p, { config: { memory: 1024 } })).toBe('/tools/t/require/0');
  });

  it('caps every disk of a config with one rule', () => {
    const p = compiled({ deny_if: [{ path: 'args.config.*.size_gib', op: 'gt', value: 512 }] });
    expect(decide(p, { config })).toBe('/tools/t/deny_if/0');
    expect(
      decide(p, { config: { ...config, scsi1: prop('local-lvm:64', { size_gib: 64 }) } }),
    ).toBe('allow');
  });

  it('tells with exists whether * reaches anything', () => {
    const p = compiled({
      deny_if: [{ path: 'args.config.*.size_gib', op: 'exists', value: true }],
    });
    expect(decide(p, { config })).toBe('/tools/t/deny_if/0');
    expect(decide(p, { config: { memory: 1 } })).toBe('allow');
  });

  it('reads any key of a free-key argument', () => {
    const p = compiled({ require: [{ path: 'args.params.vmid', op: 'in', value: [100, 101] }] });
    expect(decide(p, { params: { vmid: 100 } })).toBe('allow');
    expect(decide(p, { params: { vmid: '101' } })).toBe('allow');
    expect(decide(p, { params: { vmid: 102 } })).toBe('/tools/t/require/0');
    expect(decide(p, { params: {} })).toBe('/tools/t/require/0');
  });
});

describe('a field that the thing carrying it lacks (missing) and one with nothing to carry it (absent)', () => {
  const bare = prop('virtio', { model: 'virtio' });
  const config = {
    net0: prop('virtio,bridge=vmbr0', { model: 'virtio', bridge: 'vmbr0' }),
    net1: prop('virtio,bridge=vmbr1', { model: 'virtio', bridge: 'vmbr1' }),
    scsi1: prop('local-lvm:600', { storage: 'local-lvm', size_gib: 600 }),
  };
  const existing = prop('local-lvm:vm-100-disk-1,discard=on', {
    storage: 'local-lvm',
    volume: 'vm-100-disk-1',
    discard: true,
  });

  it('fires a * deny_if neq on a NIC without a bridge: nothing is not vmbr1 (user-mode networking)', () => {
    const p = compiled({ deny_if: [{ path: 'args.config.*.bridge', op: 'neq', value: 'vmbr1' }] });
    expect(decide(p, { config: { net1: bare } })).toBe('/tools/t/deny_if/0');
    expect(decide(p, { config: { net0: config.net1, net1: bare } })).toBe('/tools/t/deny_if/0');
    expect(reasonOf(p, { config: { net1: bare } })).toMatch(
      /args\.config\.\*\.bridge neq "vmbr1", and this call leaves it out/,
    );
    // Keys whose kind has no bridge (memory, disks) are not NICs: the rule says nothing of them.
    expect(decide(p, { config: { memory: 1024, scsi1: config.scsi1 } })).toBe('allow');
    expect(decide(p, { config: { net1: config.net1 } })).toBe('allow');
  });

  it('fires a * deny_if not_in on a NIC without a bridge, and exists: false too', () => {
    expect(
      decide(
        compiled({ deny_if: [{ path: 'args.config.*.bridge', op: 'not_in', value: ['vmbr1'] }] }),
        { config: { net0: bare } },
      ),
    ).toBe('/tools/t/deny_if/0');
    const forbidBare = compiled({
      deny_if: [{ path: 'args.config.*.bridge', op: 'exists', value: false }],
    });
    expect(decide(forbidBare, { config: { net0: bare } })).toBe('/tools/t/deny_if/0');
    expect(decide(forbidBare, { config: { net0: config.net0 } })).toBe('allow');
    // No NIC in the call: nothing to judge.
    expect(decide(forbidBare, { config: { memory: 1 } })).toBe('allow');
  });

  it('does not fire a * deny_if gt on a disk without a new size (an existing volume)', () => {
    const p = compiled({ deny_if: [{ path: 'args.config.*.size_gib', op: 'gt', value: 512 }] });
    expect(decide(p, { config: { scsi1: existing } })).toBe('allow');
    expect(
      decide(p, {
        config: {
          scsi1: existing,
          scsi2: prop('local-lvm:600', { storage: 'local-lvm', size_gib: 600 }),
        },
      }),
    ).toBe('/tools/t/deny_if/0');
  });

  it('does not meet a * require with an element that lacks the field', () => {
    const p = compiled({ require: [{ path: 'args.config.*.bridge', op: 'eq', value: 'vmbr1' }] });
    expect(decide(p, { config: { net0: config.net1, net1: bare } })).toBe('/tools/t/require/0');
    // neq too: a require needs the field.
    expect(
      decide(compiled({ require: [{ path: 'args.config.*.bridge', op: 'neq', value: 'vmbr0' }] }), {
        config: { net1: bare },
      }),
    ).toBe('/tools/t/require/0');
  });

  it('judges a property string without the field the same way outside a *', () => {
    const p = compiled({ deny_if: [{ path: 'args.net0.bridge', op: 'neq', value: 'vmbr1' }] });
    expect(decide(p, { net0: bare })).toBe('/tools/t/deny_if/0');
    expect(
      decide(p, { net0: prop('virtio,bridge=vmbr1', { model: 'virtio', bridge: 'vmbr1' }) }),
    ).toBe('allow');
    // No NIC at all: nothing to judge.
    expect(decide(p, {})).toBe('allow');
    expect(
      decide(
        compiled({ deny_if: [{ path: 'args.config.net0.bridge', op: 'neq', value: 'vmbr1' }] }),
        { config: { memory: 1 } },
      ),
    ).toBe('allow');
    expect(
      decide(
        compiled({ deny_if: [{ path: 'args.config.net0.bridge', op: 'neq', value: 'vmbr1' }] }),
        { config: { net0: bare } },
      ),
    ).toBe('/tools/t/deny_if/0');
  });

  it('fires a deny_if neq on an argument the call leaves out, and not a deny_if eq', () => {
    expect(
      decide(compiled({ deny_if: [{ path: 'args.pool', op: 'neq', value: 'lab' }] }), {}),
    ).toBe('/tools/t/deny_if/0');
    expect(
      decide(compiled({ deny_if: [{ path: 'args.pool', op: 'neq', value: 'lab' }] }), {
        pool: 'lab',
      }),
    ).toBe('allow');
    expect(decide(compiled({ deny_if: [{ path: 'args.pool', op: 'eq', value: 'lab' }] }), {})).toBe(
      'allow',
    );
    expect(
      decide(compiled({ deny_if: [{ path: 'args.params.node', op: 'neq', value: 'pve1' }] }), {
        params: {},
      }),
    ).toBe('/tools/t/deny_if/0');
  });

  it("leaves an all_tools rule on an argument a tool does not take out of that tool's calls", () => {
    const p = loadPolicy(
      {
        version: '1',
        default: 'allow',
        all_tools: { deny_if: [{ path: 'args.pool', op: 'neq', value: 'lab' }] },
      },
      CATALOG,
    );
    if (!p.ok) throw new Error(JSON.stringify(p.errors));
    expect(decide(p.policy, { node: 'pve1' }, 'other')).toBe('allow');
    expect(decide(p.policy, {}, 't')).toBe('/all_tools/deny_if/0');
  });

  it('fires a deny_if not_in on the email of a person who has none', () => {
    const p = compiled({
      deny_if: [{ path: 'user.email', op: 'not_in', value: ['ann@example.com'] }],
    });
    expect(decide(p, {})).toBe('/tools/t/deny_if/0');
    expect(decide(p, {}, 't', { ...ME, email: 'ann@example.com' })).toBe('allow');
  });

  it('reaches no inherited member of a property string or an object argument', () => {
    const p = compiled({ deny_if: [{ path: 'args.config.net0.bridge', op: 'eq', value: 'x' }] });
    expect(
      decide(p, { config: JSON.parse('{"constructor": 1, "__proto__": {"bridge": "x"}}') }),
    ).toBe('allow');
    const free = compiled({
      require: [{ path: 'args.params.toString', op: 'exists', value: true }],
    });
    expect(decide(free, { params: {} })).toBe('/tools/t/require/0');
  });
});

describe('sums and counts over a *', () => {
  const disk = (gib: number) => prop(`local-lvm:${gib}`, { storage: 'local-lvm', size_gib: gib });

  it('caps the total size of new disks in one call', () => {
    const p = compiled({
      deny_if: [{ path: 'args.config.*.size_gib', aggregate: 'sum', op: 'gt', value: 1024 }],
    });
    expect(decide(p, { config: { scsi1: disk(512), scsi2: disk(512) } })).toBe('allow');
    expect(decide(p, { config: { scsi1: disk(512), scsi2: disk(513) } })).toBe(
      '/tools/t/deny_if/0',
    );
    expect(reasonOf(p, { config: { scsi1: disk(600), scsi2: disk(600) } })).toBe(
      'Denied by policy: the sum of args.config.*.size_gib gt 1024.',
    );
    // Existing volumes add nothing; no disk at all sums to 0.
    expect(
      decide(p, {
        config: {
          scsi1: prop('local-lvm:vm-1-disk-0', { volume: 'vm-1-disk-0' }),
          scsi2: disk(1024),
        },
      }),
    ).toBe('allow');
    expect(decide(p, { config: { memory: 1 } })).toBe('allow');
  });

  it('counts the values present', () => {
    const p = compiled({
      require: [{ path: 'args.config.*.size_gib', aggregate: 'count', op: 'lte', value: 1 }],
    });
    expect(decide(p, { config: { scsi1: disk(1) } })).toBe('allow');
    expect(decide(p, { config: { memory: 1 } })).toBe('allow');
    expect(decide(p, { config: { scsi1: disk(1), scsi2: disk(1) } })).toBe('/tools/t/require/0');
  });

  it('refuses when a value to add up is not a finite number of at least 0', () => {
    const p = compiled({
      deny_if: [{ path: 'args.params.*', aggregate: 'sum', op: 'gt', value: 10 }],
    });
    expect(decide(p, { params: { a: 1, b: 2 } })).toBe('allow');
    expect(decide(p, { params: { a: '1', b: '2.5' } })).toBe('allow');
    for (const b of ['two', 'Infinity', '-Infinity', -1000, '-1000', true, '1e999']) {
      expect(decide(p, { params: { a: 100, b } }), String(b)).toBe('/tools/t/deny_if/0');
    }
    expect(reasonOf(p, { params: { b: 'two' } })).toMatch(
      /cannot be computed \(a value is not a finite number of at least 0\)/,
    );
  });

  it('refuses a size comparison on a value that is not a number, instead of letting it through', () => {
    const p = compiled({ deny_if: [{ path: 'args.params.memory', op: 'gt', value: 32768 }] });
    expect(decide(p, { params: { memory: 4096 } })).toBe('allow');
    expect(decide(p, { params: { memory: '4096' } })).toBe('allow');
    expect(decide(p, { params: { memory: '65536' } })).toBe('/tools/t/deny_if/0');
    expect(decide(p, { params: { memory: 'Infinity' } })).toBe('/tools/t/deny_if/0');
    // PVE 9 takes memory as the property string [current=]<integer>.
    expect(decide(p, { params: { memory: 'current=65536' } })).toBe('/tools/t/deny_if/0');
    expect(reasonOf(p, { params: { memory: 'current=65536' } })).toBe(
      'Denied by policy: args.params.memory is not a number, so the rule gt 32768 cannot be checked.',
    );
    // A field the call leaves out is missing, not "not a number".
    expect(decide(p, { params: {} })).toBe('allow');
  });

  it.each<[object, RegExp]>([
    [
      { path: 'args.config.memory', aggregate: 'sum', op: 'gt', value: 1 },
      /aggregate needs a path with "\*"/,
    ],
    [
      { path: 'args.config.*.size_gib', aggregate: 'sum', op: 'regex', value: '1' },
      /an aggregate is a number/,
    ],
    [
      { path: 'args.config.*.size_gib', aggregate: 'count', op: 'gt', value: '1' },
      /an aggregate is a number/,
    ],
    [{ path: 'args.config.*.size_gib', aggregate: 'avg', op: 'gt', value: 1 }, /sum|count/],
  ])('reports a misused aggregate %j as a load error', (cond, message) => {
    const result = load({ deny_if: [cond] });
    expect(result.ok).toBe(false);
    expect(messages(result)).toMatch(message);
  });
});

describe('policyView', () => {
  it('takes no object a caller sends for a parsed property string, whatever its keys', () => {
    const sent = { text: 'a', fields: { storage: 'other' }, storage: 'local' };
    expect(policyView({ params: sent })).toEqual({ params: sent });
    const p = compiled({ deny_if: [{ path: 'args.params.storage', op: 'eq', value: 'local' }] });
    expect(decide(p, { params: sent })).toBe('/tools/t/deny_if/0');
  });

  it('turns property strings into their fields at the top level and inside objects', () => {
    expect(
      policyView({
        net0: prop('virtio', { model: 'virtio' }),
        config: { memory: 1, net0: prop('x', { a: 1 }) },
        delete: ['tags'],
      }),
    ).toEqual({
      net0: { model: 'virtio' },
      config: { memory: 1, net0: { a: 1 } },
      delete: ['tags'],
    });
  });
});

describe('paths into a list argument (an argv)', () => {
  const exec = (rules: object) =>
    loadPolicy({ version: '1', default: 'deny', tools: { exec: rules } }, CATALOG);
  const run = (p: CompiledPolicy, command: string[], identity = ME) =>
    decide(p, { node: 'pve1', command }, 'exec', identity);
  const ok = (rules: object): CompiledPolicy => {
    const r = exec(rules);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.policy;
  };

  it('loads an index or *, and nothing else, after a list', () => {
    for (const path of ['args.command.0', 'args.command.12', 'args.command.*'])
      expect(messages(exec({ deny_if: [{ path, op: 'eq', value: 'sh' }] })), path).toBe('');
    for (const path of ['args.command.x', 'args.command.0.name', 'args.command.*.name'])
      expect(messages(exec({ deny_if: [{ path, op: 'eq', value: 'sh' }] })), path).not.toBe('');
  });

  it('judges the program by index: a shell in any spelling is refused, another program is not', () => {
    const p = ok({
      deny_if: [{ path: 'args.command.0', op: 'regex', value: '(^|/)(sh|bash|env|busybox)$' }],
    });
    for (const argv of [
      ['sh', '-c', 'id'],
      ['/usr/bin/sh'],
      ['./sh'],
      ['busybox', 'sh'],
      ['env', 'sh'],
    ])
      expect(run(p, argv), argv.join(' ')).toBe('/tools/exec/deny_if/0');
    expect(run(p, ['systemctl', 'status', 'nginx'])).toBe('allow');
  });

  it('holds an allow-list: require on the program and on each argument, for a group only', () => {
    const p = ok({
      require: [
        { path: 'args.command.0', op: 'in', value: ['systemctl', 'journalctl'] },
        { path: 'args.command.1', op: 'in', value: ['status', 'is-active'], except: ['group:ops'] },
        { path: 'args.command.*', op: 'regex', value: '^[A-Za-z0-9@._-]+$' },
      ],
    });
    expect(run(p, ['systemctl', 'status', 'nginx'])).toBe('allow');
    expect(run(p, ['apt', 'upgrade'])).toBe('/tools/exec/require/0');
    expect(run(p, ['systemctl', 'restart', 'nginx'])).toBe('/tools/exec/require/1');
    const ops = { ...ME, groups: ['ops'] };
    expect(run(p, ['systemctl', 'restart', 'nginx'], ops)).toBe('allow');
    // One argument outside the pattern is enough to refuse it; an argument that is not there
    // never meets a require on it.
    expect(run(p, ['systemctl', 'status', 'nginx; reboot'])).toBe('/tools/exec/require/2');
    expect(run(p, ['systemctl'])).toBe('/tools/exec/require/1');
  });

  it('counts the arguments with aggregate count', () => {
    const p = ok({
      deny_if: [{ path: 'args.command.*', aggregate: 'count', op: 'gt', value: 3 }],
    });
    expect(run(p, ['ls', '-l', '/var/log'])).toBe('allow');
    expect(run(p, ['ls', '-l', '-a', '/var/log'])).toBe('/tools/exec/deny_if/0');
  });
});
