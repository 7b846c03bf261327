// How an approval stands for the people shown it: its stored status, with its expiry and its
// grant taken into account. A pending approval whose grant is gone is revoked: offered to nobody.

import { describe, expect, it } from 'vitest';
import { approvalState, GRANT_REVOKED, mayConsume, mayDecide } from '../../src/approvals/rules';
import type { Approval, ApprovalStatus } from '../../src/approvals/types';

const NOW = 1_800_000_000_000;
const ADMIN = { userId: 'admin', groups: [], isAdmin: true };

function approval(status: ApprovalStatus, expiresIn = 60_000): Approval {
  return {
    id: 'a'.repeat(22),
    status,
    created_at: NOW - 1_000,
    expires_at: NOW + expiresIn,
    tool: 'pve_delete_vm',
    args: { node: 'pve1', vmid: 104 },
    upstream: null,
    args_hmac: 'h',
    grant_id: 'g1',
    user_id: 'ann',
    user_email: null,
    client_id: 'c1',
    approvers: null,
    approvals_required: 1,
    reason: 'r',
    rule: '/tools/pve_delete_vm/action',
    decided_by: null,
    decided_at: null,
    used_at: null,
    approved_by: [],
  };
}

describe('approvalState', () => {
  it.each<[ApprovalStatus, number, boolean, ApprovalStatus]>([
    ['pending', 60_000, true, 'pending'],
    ['pending', 60_000, false, 'revoked'],
    ['pending', -1, false, 'expired'],
    ['approved', 60_000, false, 'approved'],
    ['denied', 60_000, true, 'denied'],
    ['revoked', 60_000, true, 'revoked'],
  ])('%s, expiring in %d ms, grant live %s: %s', (status, expiresIn, live, expected) => {
    expect(approvalState(approval(status, expiresIn), NOW, live)).toBe(expected);
  });
});

describe('mayDecide', () => {
  it('refuses a pending approval whose grant is gone, saying why', () => {
    expect(mayDecide(approval('pending'), ADMIN, NOW, false)).toEqual({
      ok: false,
      reason: GRANT_REVOKED,
    });
    expect(mayDecide(approval('pending'), ADMIN, NOW, true)).toEqual({ ok: true });
  });

  it('refuses one cancelled with its grant', () => {
    expect(mayDecide(approval('revoked'), ADMIN, NOW)).toEqual({
      ok: false,
      reason: GRANT_REVOKED,
    });
  });
});

describe('mayConsume', () => {
  it('refuses an approval cancelled with its grant', () => {
    const call = { tool: 'pve_delete_vm', args_hmac: 'h', grant_id: 'g1' };
    expect(mayConsume(approval('revoked'), call, NOW)).toBe('revoked');
  });
});
