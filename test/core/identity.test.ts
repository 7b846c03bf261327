// One rule for naming a person, wherever a person is named: ids match exactly, emails
// case-insensitively, groups exactly; logins never. Admission, administrators, approvers and
// policy principals all answer the same for the same entry and person.

import { describe, expect, it } from 'vitest';
import { isRequester, mayDecide, mayView } from '../../src/approvals/rules';
import type { Approval } from '../../src/approvals/types';
import { admit } from '../../src/auth/admission';
import type { AppEnv } from '../../src/env';
import { matchesPerson, matchesPrincipal, type Identity } from '../../src/core/identity';
import { evaluatePolicy } from '../../src/policy/evaluate';
import { loadPolicy } from '../../src/policy/load';
import { TOOL_CATALOG } from '../../src/tools';
import { configOf } from '../../src/config';
import { isAdmin, isEditor } from '../../src/web/admins';
import { SCOPES } from '../../src/core/scopes';

function person(userId: string, email?: string, groups: string[] = [], login?: string): Identity {
  return {
    userId,
    email,
    groups,
    login,
    clientId: 'c',
    grantId: `g-${userId}`,
    scopes: SCOPES,
  };
}

const ALICE = person('Alice', 'Alice@Example.com', ['Ops'], 'alice-login');

const CASES: [string, Identity, boolean][] = [
  ['Alice', ALICE, true], // the id, exactly
  ['alice', ALICE, false], // an id in another case is another id
  ['alice@example.com', ALICE, true], // the email, in any case
  ['ALICE@EXAMPLE.COM', ALICE, true],
  ['alice-login', ALICE, false], // a login never matches
  ['group:Ops', ALICE, true],
  ['group:ops', ALICE, false], // group names are exact
  ['Ops', ALICE, false], // a bare group name is not a principal
  ['auth0|abc', person('auth0|abc'), true],
  ['x@y.z', person('u1'), false], // no email, no email match
];

describe('matchesPrincipal', () => {
  it.each(CASES)('%s matches %o: %s', (entry, who, expected) => {
    expect(matchesPrincipal(entry, who)).toBe(expected);
  });
});

describe('every place that names people uses the same rule', () => {
  const personEntries = CASES.filter(([entry]) => !entry.startsWith('group:') && entry !== 'Ops');

  it.each(personEntries)('admission (ALLOWED_USERS=%s)', (entry, who, expected) => {
    expect(admit(who, [entry], [], false).admitted).toBe(expected);
    expect(matchesPerson(entry, who)).toBe(expected);
  });

  it.each(personEntries)('administrators (ADMIN_USERS=%s)', (entry, who, expected) => {
    expect(isAdmin(configOf({ ADMIN_USERS: entry } as AppEnv), who)).toBe(expected);
  });

  it.each(CASES)('approvers (%s)', (entry, who, expected) => {
    const approval = {
      status: 'pending',
      expires_at: Date.now() + 60_000,
      approvers: [entry],
      user_id: 'someone-else',
      tool: 'pve_create_qemu_vm',
    } as Approval;
    const decision = mayDecide(
      approval,
      { userId: who.userId, email: who.email, groups: who.groups, isAdmin: false },
      Date.now(),
    );
    expect(decision.ok).toBe(expected);
  });

  it.each<[string, string | null, Identity, boolean]>([
    ['Alice', 'Alice@Example.com', ALICE, true],
    ['another-id', 'alice@EXAMPLE.com', ALICE, true], // the same verified email under another id
    ['alice', null, ALICE, false], // an id in another case, no email: another person
    ['another-id', 'bob@example.com', ALICE, false],
    ['another-id', null, person('u1'), false],
  ])(
    'the person who asked (id %s, email %s) is %o: %s — never an approver of that call, always a viewer',
    (userId, email, who, expected) => {
      const approval = {
        status: 'pending',
        expires_at: Date.now() + 60_000,
        approvers: ['group:Ops'],
        user_id: userId,
        user_email: email,
        tool: 'pve_create_qemu_vm',
      } as Approval;
      const decider = { userId: who.userId, email: who.email, groups: ['Ops'], isAdmin: false };
      expect(isRequester(approval, decider)).toBe(expected);
      expect(mayDecide(approval, decider, Date.now()).ok).toBe(!expected);
      expect(mayView({ ...approval, approvers: null }, decider)).toBe(expected);
    },
  );

  it.each(CASES)('policy principals (%s)', (entry, who, expected) => {
    const loaded = loadPolicy(
      {
        version: '1',
        default: 'allow',
        tools: {
          pve_list_vms: {
            deny_if: [{ path: 'args.limit', op: 'gt', value: 0, principals: [entry] }],
          },
        },
      },
      TOOL_CATALOG,
    );
    if (!loaded.ok) throw new Error('policy did not load');
    const decision = evaluatePolicy(
      loaded.policy,
      { tool: 'pve_list_vms', args: { limit: 1 } },
      who,
      null,
      Date.now(),
    );
    expect(decision.kind === 'deny').toBe(expected);
  });

  it('ADMIN_GROUPS and ALLOWED_GROUPS are exact group names', () => {
    expect(isAdmin(configOf({ ADMIN_GROUPS: 'Ops' } as AppEnv), ALICE)).toBe(true);
    expect(isAdmin(configOf({ ADMIN_GROUPS: 'ops' } as AppEnv), ALICE)).toBe(false);
    expect(admit(ALICE, [], ['Ops'], false).admitted).toBe(true);
    expect(admit(ALICE, [], ['ops'], false).admitted).toBe(false);
  });

  it('with the development sign-in and nobody named, everyone is an administrator and an editor; naming one ends that', () => {
    const dev = { AUTH_MODE: 'oauth', IDP: 'dev' } as AppEnv;
    expect(isAdmin(configOf(dev), ALICE)).toBe(true);
    expect(isEditor(configOf(dev), ALICE)).toBe(true);
    // An identity provider of a real team: nobody, until named.
    const oidc = { AUTH_MODE: 'oauth', IDP: 'oidc' } as AppEnv;
    expect(isAdmin(configOf(oidc), ALICE)).toBe(false);
    expect(isEditor(configOf(oidc), ALICE)).toBe(false);
    // Someone else named: Alice is neither.
    const named = { ...dev, ADMIN_USERS: 'bob@example.com' } as AppEnv;
    expect(isAdmin(configOf(named), ALICE)).toBe(false);
    expect(isEditor(configOf(named), ALICE)).toBe(false);
  });

  it('a scope: entry names no person: editors and administrators are people, whatever token they hold', () => {
    const holder = { ...ALICE, scopes: ['policy:edit', 'pve:read'] };
    expect(isEditor(configOf({ POLICY_EDITORS: 'scope:policy:edit' } as AppEnv), holder)).toBe(
      false,
    );
    expect(isAdmin(configOf({ ADMIN_USERS: 'scope:pve:read' } as AppEnv), holder)).toBe(false);
    expect(isEditor(configOf({ POLICY_EDITORS: 'group:Ops' } as AppEnv), holder)).toBe(true);
  });
});
