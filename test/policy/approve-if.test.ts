// `approve_if` in the pure engine: a rule that asks for a person's approval where it fires (a
// guest tagged prod, a confirmed write), asked as the tool's own approvals are, with the rule's
// approvers where it names them; a fact that cannot be read refuses instead of asking; an
// approved call is not asked again; the loader checks its approvers as it checks a tool's.

import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/core/identity';
import { SCOPES } from '../../src/core/scopes';
import { Unread } from '../../src/policy/conditions';
import { evaluatePolicy, readingKey, targetFactsReached } from '../../src/policy/evaluate';
import { type CompiledPolicy, loadPolicy } from '../../src/policy/load';
import { TOOL_CATALOG } from '../../src/tools';

const SHUTDOWN = 'pve_shutdown_vm';
const dana: Identity = {
  userId: 'dana',
  groups: ['dev'],
  clientId: 'c1',
  grantId: 'g1',
  scopes: SCOPES,
};
const NOW = Date.parse('2026-12-06T12:00:00Z');

const PROD_WRITES = {
  path: 'target.tags',
  op: 'contains',
  value: 'prod',
  when: { path: 'args.confirm', op: 'eq', value: true },
};

function load(doc: object) {
  return loadPolicy({ version: '1', default: 'allow', ...doc }, TOOL_CATALOG);
}

function policy(doc: object): CompiledPolicy {
  const result = load(doc);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.policy;
}

const confirmed = { node: 'pve1', vmid: 100, vm_type: 'qemu', confirm: true };

function decide(
  p: CompiledPolicy,
  target: Record<string, unknown> | undefined,
  args: Record<string, unknown> = confirmed,
  approved = false,
) {
  return evaluatePolicy(
    p,
    { tool: SHUTDOWN, args, ...(target ? { target } : {}), ...(approved ? { approved } : {}) },
    dana,
    null,
    NOW,
  );
}

describe('approve_if', () => {
  it('asks for approval where it fires, and lets the call through where it does not', () => {
    const p = policy({ all_tools: { approve_if: [PROD_WRITES] } });
    expect(decide(p, { tags: ['prod', 'web'] })).toEqual({
      kind: 'approval_required',
      rule: '/all_tools/approve_if/0',
      reason: `Needs a person's approval by policy: target.tags contains "prod" (the rule is for calls where args.confirm eq true).`,
    });
    expect(decide(p, { tags: ['ci'] })).toMatchObject({ kind: 'allow' });
    // A preview confirms nothing: the rule is not for it.
    expect(decide(p, { tags: ['prod'] }, { ...confirmed, confirm: false }).kind).toBe('allow');
    // Once a person approved, the rule has been met.
    expect(decide(p, { tags: ['prod'] }, confirmed, true).kind).toBe('allow');
    // A call on no guest has no tags to fire on.
    expect(decide(p, undefined).kind).toBe('allow');
  });

  it('is asked together with every other rule that asks: an approver must be one each names', () => {
    const p = policy({
      all_tools: {
        approve_if: [{ ...PROD_WRITES, approvers: ['group:leads', 'ann@x.org'], reason: 'Lead.' }],
      },
      tools: {
        [SHUTDOWN]: {
          approvers: ['group:ops', 'ann@x.org'],
          approval: 'web',
          notify: ['chat'],
          approve_if: [{ path: 'target.pool', op: 'eq', value: 'lab' }],
        },
      },
    });
    // Both fire: the tool's rule (with the tool's approvers) and all_tools' (with its own).
    expect(decide(p, { pool: 'lab', tags: ['prod'] })).toEqual({
      kind: 'approval_required',
      rule: `/tools/${SHUTDOWN}/approve_if/0`,
      reason: `Needs a person's approval by policy: target.pool eq "lab". Lead.`,
      approvers: ['ann@x.org'],
      webOnly: true,
      notify: ['chat'],
    });
    expect(decide(p, { pool: 'web', tags: ['prod'] })).toMatchObject({
      rule: '/all_tools/approve_if/0',
      reason: 'Lead.',
      approvers: ['group:leads', 'ann@x.org'],
    });
    expect(decide(p, { pool: 'lab', tags: [] })).toMatchObject({
      rule: `/tools/${SHUTDOWN}/approve_if/0`,
      approvers: ['group:ops', 'ann@x.org'],
    });
  });

  it("is not passed over by the tool's action, whose approvers are anyone's", () => {
    const p = policy({
      all_tools: { approve_if: [{ ...PROD_WRITES, approvers: ['group:leads'], reason: 'Lead.' }] },
      tools: { [SHUTDOWN]: { action: 'require_approval', reason: 'Always asked.' } },
    });
    expect(decide(p, { tags: ['prod'] })).toEqual({
      kind: 'approval_required',
      rule: `/tools/${SHUTDOWN}/action`,
      reason: 'Always asked. Lead.',
      approvers: ['group:leads'],
    });
    expect(decide(p, { tags: [] })).toEqual({
      kind: 'approval_required',
      rule: `/tools/${SHUTDOWN}/action`,
      reason: 'Always asked.',
    });
  });

  it('refuses a call whose rules name no approver in common: nobody could approve it', () => {
    const p = policy({
      all_tools: { approve_if: [{ ...PROD_WRITES, approvers: ['group:leads'] }] },
      tools: { [SHUTDOWN]: { action: 'require_approval', approvers: ['group:ops'] } },
    });
    expect(decide(p, { tags: ['prod'] })).toEqual({
      kind: 'deny',
      rule: '/all_tools/approve_if/0',
      reason: `Denied by policy: the rules that ask for a person's approval of this call (/tools/${SHUTDOWN}/action: group:ops; /all_tools/approve_if/0: group:leads) name no approver in common, so nobody could approve it.`,
    });
    expect(decide(p, { tags: [] })).toMatchObject({ approvers: ['group:ops'] });
  });

  it('comes after deny_if and require, and before limits', () => {
    const p = policy({
      all_tools: {
        approve_if: [PROD_WRITES],
        require: [{ path: 'target.pool', op: 'eq', value: 'lab' }],
      },
      tools: {
        [SHUTDOWN]: {
          deny_if: [{ path: 'target.template', op: 'eq', value: true }],
          limits: [{ counter: 'downs', window: 'hour', max: 1, scope: 'user' }],
        },
      },
    });
    const guest = { pool: 'lab', tags: ['prod'], template: false };
    expect(decide(p, { ...guest, template: true })).toMatchObject({
      kind: 'deny',
      rule: `/tools/${SHUTDOWN}/deny_if/0`,
    });
    expect(decide(p, { ...guest, pool: 'web' })).toMatchObject({
      kind: 'deny',
      rule: '/all_tools/require/0',
    });
    // The limit is used up: the person is asked first, and the approved call is then limited.
    const limit = evaluatePolicy(
      p,
      { tool: SHUTDOWN, args: confirmed, target: { ...guest, tags: [] } },
      dana,
      null,
      NOW,
    );
    expect(limit.kind).toBe('allow');
    const [downs] = limit.kind === 'allow' ? limit.limits : [];
    const readings = new Map([[readingKey(downs!), 1]]);
    const judge = (approved: boolean) =>
      evaluatePolicy(
        p,
        { tool: SHUTDOWN, args: confirmed, target: guest, ...(approved ? { approved } : {}) },
        dana,
        readings,
        NOW,
      ).kind;
    expect(judge(false)).toBe('approval_required');
    expect(judge(true)).toBe('limited');
  });

  it('refuses, asking nobody, when a fact it reaches could not be read', () => {
    const p = policy({ all_tools: { approve_if: [{ ...PROD_WRITES, reason: 'Ask a lead.' }] } });
    expect(decide(p, { tags: new Unread('the read timed out') })).toEqual({
      kind: 'deny',
      rule: '/all_tools/approve_if/0',
      reason:
        'Denied by policy: target.tags of the guest could not be read from Proxmox (the read timed out), so this rule cannot let the call through.',
    });
  });

  it('makes the facts it reaches read before the policy decides', () => {
    const p = policy({ all_tools: { approve_if: [PROD_WRITES] } });
    expect([...targetFactsReached(p, SHUTDOWN)]).toEqual(['tags']);
    expect([...targetFactsReached(policy({}), SHUTDOWN)]).toEqual([]);
    // Given the call, only where its `when` on the arguments fires: a preview reads nothing.
    expect([...targetFactsReached(p, SHUTDOWN, dana, confirmed)]).toEqual(['tags']);
    const preview = { ...confirmed, confirm: false };
    expect([...targetFactsReached(p, SHUTDOWN, dana, preview)]).toEqual([]);
    // A `when` on the guest itself is judged once it is read: its facts are read.
    const onGuest = policy({
      all_tools: {
        approve_if: [{ ...PROD_WRITES, when: { path: 'target.pool', op: 'eq', value: 'web' } }],
      },
    });
    expect([...targetFactsReached(onGuest, SHUTDOWN, dana, preview)].sort()).toEqual([
      'pool',
      'tags',
    ]);
  });
});

describe('loading approve_if', () => {
  it("accepts a tool's approvers where an approve_if asks, and refuses them where nothing does", () => {
    expect(load({ tools: { [SHUTDOWN]: { approvers: ['group:ops'] } } })).toMatchObject({
      ok: false,
      errors: [
        {
          pointer: `/tools/${SHUTDOWN}/approvers`,
          message:
            'approvers only applies when action is "require_approval" or an approve_if rule asks for approval',
        },
      ],
    });
    expect(
      load({
        all_tools: { approve_if: [PROD_WRITES] },
        tools: { [SHUTDOWN]: { approvers: ['group:ops'] } },
      }).ok,
    ).toBe(true);
    expect(
      load({ tools: { [SHUTDOWN]: { approvers: ['group:ops'], approve_if: [PROD_WRITES] } } }).ok,
    ).toBe(true);
  });

  it("checks a rule's approvers and paths as a tool's", () => {
    const loaded = load({
      tools: {
        [SHUTDOWN]: {
          approvals_required: 3,
          approve_if: [
            { ...PROD_WRITES, approvers: ['scope:pve:write'] },
            { ...PROD_WRITES, approvers: ['a@x.org', 'b@x.org'] },
            { path: 'target.tags', op: 'eq', value: 'Prod' },
          ],
        },
      },
    });
    expect(loaded.ok ? [] : loaded.errors.map((e) => `${e.pointer}: ${e.message}`)).toEqual([
      `/tools/${SHUTDOWN}/approve_if/2/op: target.tags is a list of tags: compare it with contains, in or not_in (or exists)`,
      `/tools/${SHUTDOWN}/approve_if/2/value: Proxmox keeps tags in lower case: write the tag in lower case`,
      `/tools/${SHUTDOWN}/approve_if/0/approvers/0: approvers are people or groups: a scope belongs to a token, not to whoever approves on a web page`,
      `/tools/${SHUTDOWN}/approve_if/0/approvers: 3 approvals wanted, but only 1 person may approve (name a group, or more people)`,
      `/tools/${SHUTDOWN}/approve_if/1/approvers: 3 approvals wanted, but only 2 people may approve (name a group, or more people)`,
    ]);
  });
  it("checks all_tools' rules' approvers too, against each tool's quorum", () => {
    const loaded = load({
      all_tools: { approve_if: [{ ...PROD_WRITES, approvers: ['scope:pve:write', 'a@x.org'] }] },
      tools: { [SHUTDOWN]: { approvals_required: 3 } },
    });
    expect(loaded.ok ? [] : loaded.errors.map((e) => `${e.pointer}: ${e.message}`)).toEqual([
      '/all_tools/approve_if/0/approvers/0: approvers are people or groups: a scope belongs to a token, not to whoever approves on a web page',
      `/all_tools/approve_if/0/approvers: 3 approvals wanted by ${SHUTDOWN}, but only 2 people may approve (name a group, or more people)`,
    ]);
  });

  it('warns of rules that may ask about one call and name no approver in common', () => {
    const loaded = load({
      all_tools: { approve_if: [{ ...PROD_WRITES, approvers: ['group:leads'] }] },
      tools: {
        [SHUTDOWN]: { action: 'require_approval', approvers: ['group:ops'] },
        pve_stop_vm: { action: 'require_approval', approvers: ['group:ops', 'group:leads'] },
        pve_start_vm: {},
      },
    });
    expect(loaded.ok && loaded.warnings).toEqual([
      {
        pointer: '/all_tools/approve_if/0/approvers',
        message: `no approver in common with /tools/${SHUTDOWN}/approvers (for ${SHUTDOWN}): a call both rules ask about is refused, as an approver must be one each of them names`,
      },
    ]);
  });
});
