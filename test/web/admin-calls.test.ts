// What /admin makes of an audit record and of a live counter: the guest a call was about, its
// arguments as key=value (as stored: redacted values stay redacted), and the limit a counter
// counts for in the policy.

import { describe, expect, it } from 'vitest';
import { loadPolicy } from '../../src/policy/load';
import { limitOf } from '../../src/policy/limit-of';
import type { Scope } from '../../src/policy/schema';
import { TOOL_CATALOG } from '../../src/tools';
import { argsOf, guestOf } from '../../src/web/admin-calls';

const record = (args: Record<string, unknown>, vmid: number | null = null, keys?: string[]) => ({
  args,
  vmid,
  arg_keys: keys ?? Object.keys(args),
});

describe('guestOf', () => {
  it.each([
    ['a guest action', record({ node: 'pve1', vmid: 101 }), { node: 'pve1', vmid: '101' }],
    ['a created VM (id given by the server)', record({ node: 'pve1' }, 106), { vmid: '106' }],
    [
      'a clone',
      record({ node: 'pve1', source_vmid: 9000, newid: 120, target: 'pve2' }),
      { vmid: null, from: '9000', newid: '120', target: 'pve2' },
    ],
    ['a call about no guest', record({ limit: 5 }), { node: null, vmid: null }],
    ['a redacted node', record({ node: '[redacted]' }), { node: '[redacted]' }],
  ])('reads %s', (_what, r, expected) => {
    expect(guestOf(r)).toMatchObject(expected);
  });
});

describe('argsOf', () => {
  it('lists the other arguments in order, values as text, guest arguments left out', () => {
    expect(
      argsOf(record({ node: 'pve1', vmid: 101, memory: 2048, start: true, tags: ['a', 'b'] })),
    ).toEqual([
      { key: 'memory', value: '2048', full: null },
      { key: 'start', value: 'true', full: null },
      { key: 'tags', value: '["a","b"]', full: null },
    ]);
  });

  it('keeps a redacted value redacted', () => {
    expect(argsOf(record({ cipassword: '[redacted]' }))).toEqual([
      { key: 'cipassword', value: '[redacted]', full: null },
    ]);
  });

  it('cuts a long value and keeps the whole stored text', () => {
    const long = 'x'.repeat(200);
    const [arg] = argsOf(record({ description: long }));
    expect(arg!.value).toBe(`${'x'.repeat(48)}…[cut 152 chars]`);
    expect(arg!.full).toBe(long);
  });

  it('names an argument the record kept no value of', () => {
    expect(argsOf(record({}, null, ['description']))).toEqual([
      { key: 'description', value: null, full: null },
    ]);
  });

  it('takes nothing from Object.prototype', () => {
    expect(guestOf(record({})).node).toBeNull();
    expect(argsOf(record({}, null, ['constructor']))).toEqual([
      { key: 'constructor', value: null, full: null },
    ]);
  });
});

describe('limitOf', () => {
  const loaded = loadPolicy(
    {
      version: '1',
      all_tools: { limits: [{ counter: 'calls', window: 'minute', max: 100, scope: 'global' }] },
      tools: {
        pve_list_vms: {
          limits: [
            { counter: 'lists', window: 'hour', max: 5, scope: 'user' },
            { counter: 'lists', window: 'day', max: 20, scope: 'grant' },
          ],
        },
        pve_stop_vm: {
          limits: [
            { counter: 'stops', window: 'hour', max: 2, scope: 'global', cluster: ['lab', 'prod'] },
          ],
        },
      },
    },
    TOOL_CATALOG,
  );
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const doc = loaded.policy.doc;

  it.each<[string, Scope, object | undefined]>([
    ['pve_list_vms/lists', 'user', { max: 5, window: 'hour' }],
    ['pve_list_vms/lists', 'grant', { max: 20, window: 'day' }],
    ['*/calls', 'global', { max: 100, window: 'minute' }],
    ['pve_list_vms/lists', 'global', undefined],
    ['pve_create_qemu_vm/lists', 'user', undefined],
    ['constructor/lists', 'user', undefined],
    ['no-slash', 'user', undefined],
    // A limit for some clusters: one counter per cluster, each behind the same limit.
    ['pve_stop_vm/stops@prod', 'global', { max: 2, window: 'hour' }],
    ['pve_stop_vm/stops@lab', 'global', { max: 2, window: 'hour' }],
    ['pve_stop_vm/stops@dr', 'global', undefined],
    ['pve_stop_vm/stops', 'global', undefined],
    ['pve_list_vms/lists@prod', 'user', undefined],
  ])('finds %s (%s)', (key, scope, expected) => {
    const found = limitOf(doc, key, scope);
    if (expected) expect(found).toMatchObject(expected);
    else expect(found).toBeUndefined();
  });
});
