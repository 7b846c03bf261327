// Policy paths that reach inside object arguments (args.config.net0.bridge), free-key arguments
// (args.params.<key>) and `*` over every key (args.config.*.size_gib): what loads, what is a load
// error, and how deny_if (one value) and require (every value) read a `*`.

import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/identity';
import { evaluatePolicy } from '../../src/policy/evaluate';
import { loadPolicy, type CompiledPolicy, type ToolCatalog } from '../../src/policy/load';
import { policyView } from '../../src/policy/view';

const CATALOG: ToolCatalog = {
  t: {
    node: null,
    net0: ['bridge', 'tag'],
    config: ['memory', 'net0', 'net0.bridge', 'net1', 'net1.bridge', 'scsi1', 'scsi1.size_gib', 'scsi1.storage'],
    params: ['*'],
  },
};
const ME: Identity = { userId: 'alice', groups: [], clientId: 'c', grantId: 'g' };

function load(rules: object): ReturnType<typeof loadPolicy> {
  return loadPolicy({ version: '1', default: 'deny', tools: { t: rules } }, CATALOG);
}

const messages = (result: ReturnType<typeof loadPolicy>): string => (result.ok ? '' : result.errors.map((e) => e.message).join('\n'));

function compiled(rules: object): CompiledPolicy {
  const result = load(rules);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.policy;
}

/** The decision's rule, or 'allow'. */
function decide(p: CompiledPolicy, args: Record<string, unknown>): string {
  const d = evaluatePolicy(p, { tool: 't', args: policyView(args) }, ME, null, 0);
  return d.kind === 'allow' ? 'allow' : d.rule;
}

const prop = (text: string, fields: Record<string, unknown>) => ({ text, fields });

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
    const many: ToolCatalog = { t: { config: Array.from({ length: 150 }, (_, i) => `k${String(i).padStart(3, '0')}`) } };
    const result = loadPolicy({ version: '1', tools: { t: { deny_if: [{ path: 'args.config.x', op: 'exists', value: true }] } } }, many);
    expect(messages(result)).toMatch(/k039, … \(150 in all\)/);
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
    expect(decide(compiled({ deny_if: [{ path: 'args.config.memory', op: 'gt', value: 2048 }] }), { config })).toBe('/tools/t/deny_if/0');
    expect(decide(compiled({ deny_if: [{ path: 'args.config.net0.bridge', op: 'eq', value: 'vmbr0' }] }), { config })).toBe('/tools/t/deny_if/0');
    expect(decide(compiled({ deny_if: [{ path: 'args.config.net1.bridge', op: 'eq', value: 'vmbr0' }] }), { config })).toBe('allow');
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
    expect(decide(p, { config: { ...config, scsi1: prop('local-lvm:64', { size_gib: 64 }) } })).toBe('allow');
  });

  it('tells with exists whether * reaches anything', () => {
    const p = compiled({ deny_if: [{ path: 'args.config.*.size_gib', op: 'exists', value: true }] });
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

describe('policyView', () => {
  it('turns property strings into their fields at the top level and inside objects', () => {
    expect(policyView({ net0: prop('virtio', { model: 'virtio' }), config: { memory: 1, net0: prop('x', { a: 1 }) }, delete: ['tags'] })).toEqual({
      net0: { model: 'virtio' },
      config: { memory: 1, net0: { a: 1 } },
      delete: ['tags'],
    });
  });
});
