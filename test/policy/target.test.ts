// `target.*` in the pure engine: what the loader accepts, how a fact the guest has, lacks or
// that could not be read decides a deny_if and a require, which facts a tool's rules reach (what
// must be read before deciding), and a replayed call, whose record keeps no facts of its guest.

import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/core/identity';
import { SCOPES } from '../../src/core/scopes';
import { NEW_FIELDS, TARGET_FIELDS, UNRECORDED_TARGET, Unread } from '../../src/policy/conditions';
import { evaluatePolicy, targetFactsReached } from '../../src/policy/evaluate';
import { type CompiledPolicy, loadPolicy } from '../../src/policy/load';
import { UnknownReached, UnknownValue } from '../../src/policy/unknown';
import { recordedCall, recordedMade, recordedTarget } from '../../src/replay/recorded-call';
import { type GateInput, passGate } from '../../src/calls/policy-gate';
import { shadowDisagreement } from '../../src/calls/shadow-judge';
import type { CounterBackend } from '../../src/counters/reserve';
import type { ActivePolicy } from '../../src/policy/source';
import { REDACTED } from '../../src/audit/canonical';
import { TOOL_CATALOG, TOOLS } from '../../src/tools';

const STOP = 'pve_stop_vm';
const alice: Identity = {
  userId: 'alice',
  groups: [],
  clientId: 'c1',
  grantId: 'g1',
  scopes: SCOPES,
};
const NOW = Date.parse('2026-12-06T12:00:00Z');

function policy(doc: object): CompiledPolicy {
  const result = loadPolicy({ version: '1', default: 'allow', ...doc }, TOOL_CATALOG);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.policy;
}

const stopIf = (cond: object) => policy({ tools: { [STOP]: { deny_if: [cond] } } });
const stopOnlyIf = (cond: object) => policy({ tools: { [STOP]: { require: [cond] } } });
const args = { node: 'pve1', vmid: 100, vm_type: 'qemu' };

function decide(p: CompiledPolicy, target?: Record<string, unknown>) {
  return evaluatePolicy(p, { tool: STOP, args, ...(target ? { target } : {}) }, alice, null, NOW);
}

describe('loading target paths', () => {
  it('accepts every fact, and refuses an unknown one or a path into one, naming the facts', () => {
    for (const fact of TARGET_FIELDS) {
      expect(
        loadPolicy(
          {
            version: '1',
            tools: { [STOP]: { deny_if: [{ path: `target.${fact}`, op: 'exists', value: true }] } },
          },
          TOOL_CATALOG,
        ).ok,
      ).toBe(true);
    }
    for (const path of ['target.owner', 'target.tags.0', 'target']) {
      const loaded = loadPolicy(
        { version: '1', tools: { [STOP]: { deny_if: [{ path, op: 'eq', value: 'x' }] } } },
        TOOL_CATALOG,
      );
      expect(loaded).toMatchObject({
        ok: false,
        errors: [
          {
            pointer: `/tools/${STOP}/deny_if/0/path`,
            message:
              'target paths are target.pool, target.tags, target.name, target.node, target.status, target.qmpstatus, target.template, target.protection, target.lock, target.ha, target.vm_type, target.cluster',
          },
        ],
      });
    }
  });
});

describe('target.status: running, stopped or unknown', () => {
  it('refuses a value it never takes, naming qmpstatus; loads the ones it takes', () => {
    const load = (cond: object) =>
      loadPolicy({ version: '1', tools: { [STOP]: { deny_if: [cond] } } }, TOOL_CATALOG);
    expect(load({ path: 'target.status', op: 'in', value: ['paused', 'running'] })).toMatchObject({
      ok: false,
      errors: [
        {
          pointer: `/tools/${STOP}/deny_if/0/value`,
          message:
            'target.status is running, stopped or unknown (a paused VM is running), never "paused": QEMU\'s own state (paused, prelaunch, suspended) is target.qmpstatus',
        },
      ],
    });
    for (const value of ['running', 'stopped', 'unknown'])
      expect(load({ path: 'target.status', op: 'eq', value }).ok).toBe(true);
    expect(load({ path: 'target.qmpstatus', op: 'eq', value: 'paused' }).ok).toBe(true);
  });
});

describe('target.tags, a list of lower-case tags', () => {
  it('refuses an operator that cannot compare a list, and a tag with a capital', () => {
    const load = (cond: object) =>
      loadPolicy({ version: '1', tools: { [STOP]: { deny_if: [cond] } } }, TOOL_CATALOG);
    expect(load({ path: 'target.tags', op: 'eq', value: 'prod' })).toMatchObject({
      ok: false,
      errors: [
        {
          pointer: `/tools/${STOP}/deny_if/0/op`,
          message:
            'target.tags is a list of tags: compare it with contains, in or not_in (or exists)',
        },
      ],
    });
    expect(load({ path: 'target.tags', op: 'in', value: ['prod', 'Staging'] })).toMatchObject({
      ok: false,
      errors: [
        {
          pointer: `/tools/${STOP}/deny_if/0/value`,
          message: 'Proxmox keeps tags in lower case: write the tag in lower case',
        },
      ],
    });
  });

  it('in: any of the tags is one of the list; not_in: none is', () => {
    const either = stopIf({ path: 'target.tags', op: 'in', value: ['prod', 'customer'] });
    expect(decide(either, { tags: ['web', 'customer'] }).kind).toBe('deny');
    expect(decide(either, { tags: ['web'] }).kind).toBe('allow');
    expect(decide(either, { tags: [] }).kind).toBe('allow');
    const onlyLab = stopIf({ path: 'target.tags', op: 'not_in', value: ['lab'] });
    expect(decide(onlyLab, { tags: ['lab', 'web'] }).kind).toBe('allow');
    expect(decide(onlyLab, { tags: ['web'] }).kind).toBe('deny');
  });
});

describe('judging target facts', () => {
  it('fires a deny_if on a fact the guest has, and not on one it has otherwise', () => {
    const p = stopIf({ path: 'target.tags', op: 'contains', value: 'prod' });
    expect(decide(p, { tags: ['prod', 'web'] })).toMatchObject({
      kind: 'deny',
      rule: `/tools/${STOP}/deny_if/0`,
      reason: 'Denied by policy: target.tags contains "prod".',
    });
    expect(decide(p, { tags: ['ci'] }).kind).toBe('allow');
    expect(decide(p, { tags: [] }).kind).toBe('allow');
  });

  it('takes a fact that could not be read as refusing, for a deny_if and a require alike, whatever the rule says', () => {
    const unread = {
      tags: new Unread('the read timed out'),
      pool: new Unread('the read timed out'),
    };
    const reason =
      'Denied by policy: target.tags of the guest could not be read from Proxmox (the read timed out), so this rule cannot let the call through.';
    expect(
      decide(
        stopIf({ path: 'target.tags', op: 'contains', value: 'prod', reason: 'No prod.' }),
        unread,
      ),
    ).toMatchObject({ kind: 'deny', reason });
    expect(
      decide(stopOnlyIf({ path: 'target.pool', op: 'eq', value: 'lab' }), unread),
    ).toMatchObject({
      kind: 'deny',
      reason: reason.replace('target.tags', 'target.pool'),
    });
    // A rule's `when` on an unread fact: whether the rule is for the call is not known, so it is.
    const when = stopIf({
      path: 'args.vmid',
      op: 'gte',
      value: 100,
      when: { path: 'target.tags', op: 'contains', value: 'prod' },
    });
    expect(decide(when, unread)).toMatchObject({ kind: 'deny', reason });
    expect(decide(when, { tags: ['ci'] }).kind).toBe('allow');
  });

  it('words a fact the guest lacks, and a call that acts on no guest', () => {
    const lab = stopOnlyIf({ path: 'target.pool', op: 'eq', value: 'lab' });
    expect(decide(lab, { tags: [] })).toMatchObject({
      reason:
        'Denied by policy: target.pool is required (it must satisfy eq "lab") and the guest has none.',
    });
    expect(decide(lab)).toMatchObject({
      reason:
        'Denied by policy: target.pool is required (it must satisfy eq "lab") and this call acts on no guest.',
    });
    expect(decide(lab, { pool: 'lab' }).kind).toBe('allow');
    const outside = stopIf({ path: 'target.pool', op: 'neq', value: 'lab' });
    expect(decide(outside, {})).toMatchObject({
      reason:
        'Denied by policy: target.pool neq "lab", and the guest has none (a value that is not there equals nothing).',
    });
  });

  it('reads, of a policy, only the facts its rules for the tool reach (all_tools and when included)', () => {
    const p = policy({
      tools: {
        [STOP]: {
          deny_if: [
            {
              path: 'args.vmid',
              op: 'eq',
              value: 1,
              when: { path: 'target.qmpstatus', op: 'eq', value: 'paused' },
            },
          ],
          require: [{ path: 'target.pool', op: 'eq', value: 'lab' }],
        },
        pve_start_vm: { deny_if: [{ path: 'args.vmid', op: 'eq', value: 1 }] },
      },
      all_tools: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }] },
    });
    expect([...targetFactsReached(p, STOP)].sort()).toEqual(['pool', 'qmpstatus', 'tags']);
    expect([...targetFactsReached(p, 'pve_start_vm')]).toEqual(['tags']);
    expect(targetFactsReached(policy({ tools: { [STOP]: {} } }), STOP).size).toBe(0);
    // A rule for other callers reads nothing for this one.
    const agentsOnly = stopIf({
      path: 'target.pool',
      op: 'neq',
      value: 'lab',
      principals: ['group:agents'],
    });
    expect([...targetFactsReached(agentsOnly, STOP, alice)]).toEqual([]);
    expect([...targetFactsReached(agentsOnly, STOP, { ...alice, groups: ['agents'] })]).toEqual([
      'pool',
    ]);
  });

  it('cannot judge a recorded call, whose record keeps no facts of its guest: the rule is unknown', () => {
    const p = stopIf({ path: 'target.tags', op: 'contains', value: 'prod' });
    expect(() => decide(p, UNRECORDED_TARGET as Record<string, unknown>)).toThrow(UnknownReached);
    // Not even whether the guest had a lock is known.
    for (const value of [true, false])
      expect(() =>
        decide(
          stopIf({ path: 'target.lock', op: 'exists', value }),
          UNRECORDED_TARGET as Record<string, unknown>,
        ),
      ).toThrow(UnknownReached);
    // A rule that needs no fact still decides it.
    expect(
      decide(
        stopIf({ path: 'args.vmid', op: 'eq', value: 100 }),
        UNRECORDED_TARGET as Record<string, unknown>,
      ),
    ).toMatchObject({
      kind: 'deny',
    });
  });
});

describe('new.*: the guest a call makes', () => {
  const CLONE = 'pve_clone_vm';
  const clonePolicy = (cond: object) => policy({ tools: { [CLONE]: { require: [cond] } } });
  const clone = TOOLS.find((t) => t.name === CLONE)!;
  const cloneArgs = { node: 'pve1', source_vmid: 9000, newid: 500 };

  it("judges a clone's new guest as the call makes it, beside its source", () => {
    const lab = clonePolicy({ path: 'new.pool', op: 'eq', value: 'lab' });
    // What the server read of the source (resolve): Proxmox copies its tags, and names a clone
    // without a name after it.
    const fromSource = { tags: ['prod', 'web'], name: 'Copy-of-VM-web01' };
    const made = (args: Record<string, unknown>) => clone.makes!(args, fromSource) ?? undefined;
    const decideClone = (args: Record<string, unknown>) =>
      evaluatePolicy(lab, { tool: CLONE, args, made: made(args) }, alice, null, NOW);
    expect(decideClone({ ...cloneArgs, pool: 'lab' }).kind).toBe('allow');
    expect(decideClone(cloneArgs)).toMatchObject({
      kind: 'deny',
      reason:
        'Denied by policy: new.pool is required (it must satisfy eq "lab") and this call has none.',
    });
    expect(made({ ...cloneArgs, target: 'pve2', name: 'web-9' })).toEqual({
      node: 'pve2',
      vm_type: 'qemu',
      template: false,
      tags: ['prod', 'web'],
      name: 'web-9',
    });
    expect(made(cloneArgs)).toMatchObject({ name: 'Copy-of-VM-web01', tags: ['prod', 'web'] });
    const noProd = policy({
      tools: { [CLONE]: { deny_if: [{ path: 'new.tags', op: 'contains', value: 'prod' }] } },
    });
    expect(
      evaluatePolicy(
        noProd,
        { tool: CLONE, args: cloneArgs, made: made(cloneArgs) },
        alice,
        null,
        NOW,
      ),
    ).toMatchObject({ kind: 'deny', rule: `/tools/${CLONE}/deny_if/0` });
  });

  it('loads new paths for the facts a made guest has, and nothing else', () => {
    for (const fact of NEW_FIELDS) {
      const rule = { path: `new.${fact}`, op: 'exists', value: true };
      expect(
        loadPolicy({ version: '1', tools: { [CLONE]: { require: [rule] } } }, TOOL_CATALOG).ok,
      ).toBe(true);
    }
    expect(
      loadPolicy(
        {
          version: '1',
          tools: { [CLONE]: { require: [{ path: 'new.status', op: 'eq', value: 'x' }] } },
        },
        TOOL_CATALOG,
      ),
    ).toMatchObject({
      ok: false,
      errors: [
        {
          pointer: `/tools/${CLONE}/require/0/path`,
          message:
            'new paths are new.pool, new.tags, new.name, new.node, new.template, new.vm_type',
        },
      ],
    });
  });

  it('replays a recorded clone on its recorded arguments, a lost one unknown', () => {
    expect(recordedMade(clone.makes, { ...cloneArgs, pool: 'lab' })).toMatchObject({ pool: 'lab' });
    // What it took from its source comes back from the record's (inherited); a record made
    // before the server kept the tags has them unknown, not none.
    const inherits = clone.inherits!;
    const tagged = recordedCall(
      { ...cloneArgs, '(inherited)': { sockets: 1, tags: ['prod'], name: 'Copy-of-VM-web01' } },
      clone.input,
      inherits,
    );
    expect(recordedMade(clone.makes, tagged.args, tagged.inherited)).toMatchObject({
      tags: ['prod'],
      name: 'Copy-of-VM-web01',
    });
    // A name Proxmox made is read back as stored, even one no caller could give (a label of more
    // than 63 characters).
    const long = `Copy-of-VM-${'a'.repeat(60)}`;
    const named = recordedCall(
      { ...cloneArgs, '(inherited)': { sockets: 1, tags: [], name: long } },
      clone.input,
      inherits,
    );
    expect(recordedMade(clone.makes, named.args, named.inherited)).toMatchObject({ name: long });
    // "0" is no name to Proxmox (the clone would be named after its source): refused as input.
    const zero = clone.input.safeParse({ ...cloneArgs, name: '0' });
    expect(zero.success).toBe(false);
    expect(zero.error?.issues[0]?.message).toBe(
      'must not be "0": Proxmox takes it for no name (leave name out for Copy-of-VM-<source>)',
    );
    const older = recordedCall(
      { ...cloneArgs, '(inherited)': { sockets: 1 } },
      clone.input,
      inherits,
      clone.newlyInherited,
    );
    expect(older.view.tags).toBeInstanceOf(UnknownValue);
    // What the server always kept is not taken for unknown: a source without a NIC left none.
    expect('net0' in older.view).toBe(false);
    // Its name unknown too, unless the call gave one.
    const byName = policy({
      tools: { [CLONE]: { deny_if: [{ path: 'new.name', op: 'regex', value: '^web-' }] } },
    });
    const judgeName = (stored: Record<string, unknown>) => {
      const r = recordedCall(stored, clone.input, inherits, clone.newlyInherited);
      const made = recordedMade(clone.makes, r.args, r.inherited);
      return evaluatePolicy(byName, { tool: CLONE, args: r.view, made }, alice, null, NOW);
    };
    expect(() => judgeName({ ...cloneArgs, '(inherited)': { sockets: 1 } })).toThrow(
      UnknownReached,
    );
    expect(judgeName({ ...cloneArgs, name: 'web-9', '(inherited)': { sockets: 1 } })).toMatchObject(
      { kind: 'deny' },
    );
    // A record that keeps no (inherited) at all (the call refused before the source was read):
    // all of it unknown, but what the call set itself.
    const unread = recordedCall({ ...cloneArgs, cores: 2 }, clone.input, inherits, []);
    expect(unread.view.memory).toBeInstanceOf(UnknownValue);
    expect(unread.view.disk_gib).toBeInstanceOf(UnknownValue);
    expect(unread.view.cores).toBe(2);
    const noProd = policy({
      tools: { [CLONE]: { deny_if: [{ path: 'new.tags', op: 'contains', value: 'prod' }] } },
    });
    const madeThen = recordedMade(clone.makes, older.args, older.inherited);
    expect(() =>
      evaluatePolicy(noProd, { tool: CLONE, args: {}, made: madeThen }, alice, null, NOW),
    ).toThrow(UnknownReached);
    // The record kept the pool redacted: read back, it is a lost argument.
    const lost = recordedCall({ ...cloneArgs, pool: REDACTED }, clone.input).args;
    const made = recordedMade(clone.makes, lost)!;
    const lab = clonePolicy({ path: 'new.pool', op: 'eq', value: 'lab' });
    expect(() => evaluatePolicy(lab, { tool: CLONE, args: {}, made }, alice, null, NOW)).toThrow(
      UnknownReached,
    );
  });
});

describe("the shadow's reading of a recorded clone", () => {
  const CLONE = 'pve_clone_vm';
  const clone = TOOLS.find((t) => t.name === CLONE)!;
  const args = { node: 'pve1', source_vmid: 9000, newid: 500 };
  /** The shadow's view of a clone the active `policy` judged, kept as `stored`, beside it. */
  const judged = (
    active: object,
    shadow: object,
    stored: Record<string, unknown>,
    inherited: Record<string, unknown>,
  ) =>
    shadowDisagreement(
      {
        ok: true,
        origin: 'policy.json',
        version: 1,
        sha256: null,
        text: '',
        policy: policy(active),
        shadow: { version: 2, policy: policy(shadow) },
      },
      {
        tool: CLONE,
        args,
        stored,
        input: clone.input,
        identity: alice,
        made: clone.makes!(args, inherited) ?? undefined,
        makesOf: clone.makes,
        inherits: clone.inherits,
        newlyInherited: clone.newlyInherited,
        dryRun: false,
        now: NOW,
        requestId: 'r-1',
      },
    );
  const denyIf = (path: string, op: string, value: unknown) => ({
    tools: { [CLONE]: { deny_if: [{ path, op, value }] } },
  });

  it('reads what the clone took from its source back as stored, as a replay does', () => {
    // A name Proxmox made from a long source name: no caller could give it (a label of 71).
    const long = `Copy-of-VM-${'a'.repeat(60)}`;
    const inherited = { sockets: 1, tags: [], name: long };
    expect(
      judged(
        { tools: { [CLONE]: {} } },
        denyIf('new.name', 'eq', long),
        { ...args, '(inherited)': inherited },
        inherited,
      ),
    ).toMatchObject({
      active: { decision: 'allow' },
      shadow: { decision: 'deny', rule: `/tools/${CLONE}/deny_if/0` },
    });
    // A call the active version refused before the source was read keeps no (inherited): to a
    // shadow rule on the new guest's tags, unknown, as to a replay.
    expect(
      judged(
        { tools: { [CLONE]: { action: 'deny' } } },
        denyIf('new.tags', 'contains', 'prod'),
        args,
        {},
      ),
    ).toMatchObject({
      active: { decision: 'deny' },
      shadow: { decision: 'unknown', rule: `/tools/${CLONE}/deny_if/0` },
    });
  });
});

describe('what a record tells of its guest', () => {
  const stop = TOOLS.find((t) => t.name === STOP)!;
  const create = TOOLS.find((t) => t.name === 'pve_create_qemu_vm')!;
  const raw = TOOLS.find((t) => t.name === 'pve_api_request')!;

  it('none of an existing guest, the arguments of a made one, nothing where the call acted on no guest', () => {
    expect(recordedTarget(stop.target, { node: 'pve1', vmid: 100 })).toBe(UNRECORDED_TARGET);
    expect(
      recordedTarget(create.target, { node: 'pve1', vmid: 700, pool: 'lab', tags: ['web'] }),
    ).toEqual({ node: 'pve1', vm_type: 'qemu', template: false, tags: ['web'], pool: 'lab' });
    expect(recordedTarget(raw.target, { method: 'GET', path: '/version' })).toBeUndefined();
    expect(
      recordedTarget(raw.target, { method: 'POST', path: '/nodes/pve1/lxc/200/status/stop' }),
    ).toBe(UNRECORDED_TARGET);
    expect(recordedTarget(undefined, {})).toBeUndefined();
  });

  it('the facts a record keeps, a fact not read as not read, any other unknown', () => {
    const kept = recordedTarget(
      stop.target,
      { node: 'pve1', vmid: 100 },
      {
        tags: ['prod'],
        pool: 'unread: the read timed out',
      },
    )!;
    expect(kept.tags).toEqual(['prod']);
    expect(kept.pool).toEqual(new Unread('the read timed out'));
    expect(kept.template).toBe(UNRECORDED_TARGET.template);
    const p = stopIf({ path: 'target.tags', op: 'contains', value: 'prod' });
    expect(decide(p, kept as Record<string, unknown>)).toMatchObject({ kind: 'deny' });
    expect(() =>
      decide(
        stopIf({ path: 'target.template', op: 'eq', value: true }),
        kept as Record<string, unknown>,
      ),
    ).toThrow(UnknownReached);
  });

  it("a status kept as the list said it before (a paused VM's QEMU state) is judged as it is said now", () => {
    const kept = (status: string) =>
      recordedTarget(stop.target, { node: 'pve1', vmid: 100 }, { status }) as Record<
        string,
        unknown
      >;
    expect(kept('paused').status).toBe('running');
    expect(kept('stopped').status).toBe('stopped');
    expect(kept('unknown').status).toBe('unknown');
    const running = stopIf({ path: 'target.status', op: 'eq', value: 'running' });
    expect(decide(running, kept('paused'))).toMatchObject({ kind: 'deny' });
    // A status the trail scrubbed stays unknown.
    expect(() => decide(running, kept('[redacted]'))).toThrow(UnknownReached);
  });

  it('a fact read as none is missing again; one the trail redacted is unknown', () => {
    const kept = recordedTarget(
      stop.target,
      { node: 'pve1', vmid: 100 },
      {
        pool: null,
        name: '[redacted]',
      },
    )!;
    expect(Object.hasOwn(kept, 'pool')).toBe(false);
    const lab = stopOnlyIf({ path: 'target.pool', op: 'eq', value: 'lab' });
    expect(decide(lab, kept as Record<string, unknown>)).toMatchObject({
      kind: 'deny',
      reason:
        'Denied by policy: target.pool is required (it must satisfy eq "lab") and the guest has none.',
    });
    expect(() =>
      decide(
        stopIf({ path: 'target.name', op: 'eq', value: 'web01' }),
        kept as Record<string, unknown>,
      ),
    ).toThrow(UnknownReached);
  });

  it("a task's status is of the guest its UPID names, and of none for a task that names none", () => {
    const task = TOOLS.find((t) => t.name === 'pve_get_task_status')!;
    const upid = (type: string, id: string) =>
      `UPID:pve1:0000ABCD:00001234:65000000:${type}:${id}:root@pam!mcp:`;
    expect(task.target!({ node: 'pve1', upid: upid('qmstart', '100') })).toEqual({
      vmid: 100,
      gone: true,
    });
    expect(task.target!({ node: 'pve1', upid: upid('vzdump', '201') })).toMatchObject({
      vmid: 201,
    });
    expect(task.target!({ node: 'pve1', upid: upid('aptupdate', '') })).toBeNull();
    expect(task.target!({ node: 'pve1', upid: upid('imgcopy', 'local') })).toBeNull();
    // Ceph's OSD tasks carry the OSD's number, which is no guest's.
    expect(task.target!({ node: 'pve1', upid: upid('cephdestroyosd', '120') })).toBeNull();
    // A destroyed guest's last task: that guest may be gone.
    expect(task.target!({ node: 'pve1', upid: upid('qmdestroy', '120') })).toEqual({
      vmid: 120,
      gone: true,
    });
  });

  it('a raw request is of the guest its path names: its own, its HA resource, its replication jobs', () => {
    const raw = TOOLS.find((t) => t.name === 'pve_api_request')!;
    const of = (path: string) => raw.target!({ method: 'PUT', path });
    expect(of('/nodes/pve1/qemu/100/config')).toEqual({ vmid: 100 });
    expect(of('/nodes/pve2/lxc/200')).toEqual({ vmid: 200 });
    expect(of('/cluster/ha/resources/120')).toEqual({ vmid: 120 });
    expect(of('/cluster/ha/resources/120/migrate')).toEqual({ vmid: 120 });
    expect(of('/cluster/replication/120-0')).toEqual({ vmid: 120 });
    expect(of('/nodes/pve2/replication/120-0/schedule_now')).toEqual({ vmid: 120 });
    for (const path of [
      '/cluster/ha/resources',
      '/cluster/ha/groups/g1',
      '/cluster/replication',
      '/nodes/pve1/replication',
      '/nodes/pve1/storage/local/content',
      '/version',
    ])
      expect(of(path), path).toBeNull();
  });

  it('an argument the record lost that names the guest: its facts are unknown', () => {
    const { args } = recordedCall({ node: 'pve1', vmid: REDACTED }, stop.input);
    expect(recordedTarget(stop.target, args)).toBe(UNRECORDED_TARGET);
  });
});

describe('the gate and the facts found as the arguments were recorded', () => {
  const ruled = stopIf({ path: 'target.tags', op: 'contains', value: 'prod' });
  const active = (p: CompiledPolicy): ActivePolicy => ({
    ok: true,
    origin: 'POLICY',
    version: 1,
    sha256: null,
    policy: p,
    text: '{}',
  });
  const noLimits: CounterBackend = {
    target: () => {
      throw new Error('no limit applies');
    },
  };
  // Proxmox's answer now: the guest is tagged prod.
  const reads: string[][] = [];
  const input = (found?: GateInput['targetFound']): GateInput => ({
    tool: STOP,
    args,
    identity: alice,
    dryRun: false,
    now: NOW,
    target: async (wanted) => {
      reads.push([...wanted]);
      return { tags: ['prod'] };
    },
    ...(found ? { targetFound: found } : {}),
  });

  it('takes what was found under the policy deciding, and reads again under any other', async () => {
    reads.length = 0;
    // Found under this very policy: decided on it, nothing asked again.
    const same = await passGate(
      active(ruled),
      noLimits,
      input({ policy: ruled, facts: { tags: [] } }),
    );
    expect(same).toMatchObject({ ok: true });
    expect(reads).toEqual([]);
    // Found under another policy (an equal one, compiled apart): the facts are read for this one.
    const other = stopIf({ path: 'target.tags', op: 'contains', value: 'prod' });
    const apart = await passGate(
      active(ruled),
      noLimits,
      input({ policy: other, facts: { tags: [] } }),
    );
    expect(apart).toMatchObject({
      ok: false,
      refusal: { kind: 'deny', rule: `/tools/${STOP}/deny_if/0` },
    });
    expect(reads).toEqual([['tags']]);
    // Nothing found: read, as before.
    expect(await passGate(active(ruled), noLimits, input())).toMatchObject({ ok: false });
    expect(reads).toEqual([['tags'], ['tags']]);
  });
});
