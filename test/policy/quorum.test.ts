// `approvals_required` in the policy: loaded only beside require_approval, and the decision asks
// for that many people, on the web page only (never in the conversation of the one who asked).

import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/core/identity';
import { evaluatePolicy } from '../../src/policy/evaluate';
import { loadPolicy } from '../../src/policy/load';
import { TOOL_CATALOG } from '../../src/tools';
import { SCOPES } from '../../src/core/scopes';

const WHO: Identity = {
  userId: 'u',
  groups: [],
  clientId: 'c',
  grantId: 'g',
  scopes: SCOPES,
};

describe('approvals_required', () => {
  it('asks for that many approvals, on the web page', () => {
    const loaded = loadPolicy(
      {
        version: '1',
        tools: { pve_delete_vm: { action: 'require_approval', approvals_required: 2 } },
      },
      TOOL_CATALOG,
    );
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
    const decision = evaluatePolicy(
      loaded.policy,
      { tool: 'pve_delete_vm', args: { node: 'pve1', vmid: 104, confirm: true } },
      WHO,
      null,
      0,
    );
    expect(decision).toMatchObject({
      kind: 'approval_required',
      approvalsRequired: 2,
      webOnly: true,
    });
  });

  it('is refused where no approval is asked, and outside 1 to 10', () => {
    const errors = (tool: object) => {
      const r = loadPolicy({ version: '1', tools: { pve_delete_vm: tool } }, TOOL_CATALOG);
      return r.ok ? [] : r.errors.map((e) => `${e.pointer}: ${e.message}`);
    };
    expect(errors({ approvals_required: 2 })).toEqual([
      '/tools/pve_delete_vm/approvals_required: approvals_required only applies when action is "require_approval" or an approve_if rule asks for approval',
    ]);
    expect(errors({ action: 'require_approval', approvals_required: 11 })[0]).toMatch(
      /^\/tools\/pve_delete_vm\/approvals_required: /,
    );
    expect(errors({ action: 'require_approval', approvals_required: 1 })).toEqual([]);
    // Two named people can never give three approvals; a group can grow.
    expect(
      errors({
        action: 'require_approval',
        approvers: ['a@x.org', 'b@x.org'],
        approvals_required: 3,
      }),
    ).toEqual([
      '/tools/pve_delete_vm/approvals_required: 3 approvals wanted, but only 2 people may approve (name a group, or more people)',
    ]);
    expect(
      errors({
        action: 'require_approval',
        approvers: ['a@x.org', 'group:leads'],
        approvals_required: 3,
      }),
    ).toEqual([]);
  });
});
