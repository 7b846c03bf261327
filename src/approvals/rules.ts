// Who may decide an approval, and whether an approval may be spent on a call. Pure.

import { matchesAnyPrincipal, matchesPerson } from '../core/identity';
import type {
  Approval,
  ApprovalStatus,
  ConsumeCall,
  ConsumeRefusal,
  DecideCheck,
  Decider,
} from './types';

export type { DecideCheck };

export const NO_SUCH_APPROVAL = 'No such approval.';

/**
 * Whether this person asked for the call: by every identifier the request carries, under the one
 * rule for naming a person (../core/identity.ts): the same user id, or the same verified email whatever
 * its case. One person signed in under another id (another IdP, another spelling the IdP keeps
 * apart) is still the person who asked.
 */
export function isRequester(
  approval: Pick<Approval, 'user_id' | 'user_email'>,
  who: Decider,
): boolean {
  return (
    matchesPerson(approval.user_id, who) ||
    (!!approval.user_email && matchesPerson(approval.user_email, who))
  );
}

/** Who may see an approval's page: the person who asked, named approvers, administrators. */
export function mayView(approval: Approval, viewer: Decider): boolean {
  return (
    viewer.isAdmin ||
    isRequester(approval, viewer) ||
    (approval.approvers !== null && matchesAnyPrincipal(approval.approvers, viewer))
  );
}

/**
 * How an approval stands now: its stored status, except that a pending one past its expiry is
 * expired, and a pending one whose grant no longer exists is revoked (that client lost its
 * access, so the call it asked for can never be made). `grantLive` comes from the OAuth store.
 */
export function approvalState(
  approval: Pick<Approval, 'status' | 'expires_at'>,
  now: number,
  grantLive: boolean,
): ApprovalStatus {
  if (approval.status !== 'pending') return approval.status;
  if (approval.expires_at <= now) return 'expired';
  return grantLive ? 'pending' : 'revoked';
}

export const GRANT_REVOKED =
  'The client that asked for this call no longer has access (its grant was revoked): the call can never be made, so it cannot be approved.';

export function mayDecide(
  approval: Approval,
  decider: Decider,
  now: number,
  grantLive = true,
): DecideCheck {
  const state = approvalState(approval, now, grantLive);
  if (state === 'revoked') return { ok: false, reason: GRANT_REVOKED };
  if (state !== 'pending') return { ok: false, reason: `This approval is already ${state}.` };
  const isCaller = isRequester(approval, decider);
  if (approval.approvals_required > 1) {
    // A quorum is of other people: the person who asked never counts, nor anyone twice.
    if (isCaller)
      return {
        ok: false,
        reason: `You asked for this call; ${approval.approvals_required} other people must approve it.`,
      };
    if (
      approval.approved_by.some((g) => g.user_id === decider.userId || matchesPerson(g.by, decider))
    )
      return {
        ok: false,
        reason: `You have approved it already; it needs ${approval.approvals_required - approval.approved_by.length} more approval${approval.approvals_required - approval.approved_by.length === 1 ? '' : 's'} from other people.`,
      };
  }
  if (approval.approvers) {
    // Named approvers exist so that nobody approves their own call.
    if (isCaller)
      return {
        ok: false,
        reason: 'You asked for this call, and the policy requires someone else to approve it.',
      };
    if (!matchesAnyPrincipal(approval.approvers, decider)) {
      return {
        ok: false,
        reason: `Only ${approval.approvers.join(', ')} may approve calls to ${approval.tool}.`,
      };
    }
    return { ok: true };
  }
  if (isCaller || decider.isAdmin) return { ok: true };
  return {
    ok: false,
    reason:
      approval.approvals_required > 1
        ? 'Only administrators may approve this call.'
        : 'Only the person who asked, or an administrator, may approve this call.',
  };
}

/** What the policy in force asks of an approval now (absent: not checked). */
export type ApprovalTerms = Pick<ConsumeCall, 'approvals_required' | 'approvers'>;

/** Whether an approval given under `approval`'s terms still satisfies the policy's `terms`. */
export function meetsTerms(
  approval: Pick<Approval, 'approvals_required' | 'approvers'>,
  terms: ApprovalTerms,
): boolean {
  if (
    terms.approvals_required !== undefined &&
    approval.approvals_required < terms.approvals_required
  )
    return false;
  if (terms.approvers === undefined) return true;
  const key = (list: string[] | null) => (list ? [...list].sort().join('\n') : '');
  return key(approval.approvers) === key(terms.approvers);
}

/** Whether this approval may be spent on this call (tool, arguments, grant, the rule's terms), now. */
export function mayConsume(
  approval: Approval | null,
  call: ConsumeCall,
  now: number,
): ConsumeRefusal | null {
  if (!approval) return 'not_found';
  if (approval.status === 'used') return 'used';
  if (approval.status === 'denied') return 'denied';
  if (approval.status === 'revoked') return 'revoked';
  if (approval.expires_at <= now || approval.status === 'expired') return 'expired';
  if (approval.status === 'pending') return 'pending';
  if (approval.tool !== call.tool || approval.args_hmac !== call.args_hmac) return 'other_call';
  if (approval.grant_id !== call.grant_id) return 'other_grant';
  // Given under a looser rule than the one in force now (fewer people, other approvers).
  if (!meetsTerms(approval, call)) return 'rule_changed';
  return null;
}

export const CONSUME_MESSAGES: Record<ConsumeRefusal, string> = {
  not_found: 'This approval_id does not exist.',
  pending:
    'This call has not been approved yet. Ask the person to approve it, then call again with the same approval_id.',
  denied: 'A person denied this call.',
  used: 'This approval was already used; each approval allows one call. Ask for a new one.',
  expired: 'This approval expired. Call again without approval_id to ask for a new one.',
  revoked: 'The grant that asked for this approval was revoked; sign in again and ask anew.',
  other_call:
    'This approval is for a different call (tool or arguments differ). Approvals are bound to the exact call.',
  other_grant: 'This approval was asked for by another client or session grant.',
  rule_changed:
    'The policy now asks more of this approval (more people, or other approvers) than when it was given. Call again without approval_id to ask for a new one.',
};
