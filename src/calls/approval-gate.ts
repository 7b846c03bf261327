// Human approval of a call the policy marks `require_approval`, three ways:
//   1. the call carries an approval_id a person granted out of band: spend it (once, for this
//      exact call and grant);
//   2. the client can be asked (MCP elicitation, form mode), the policy names no approvers and
//      does not say `"approval": "web"`: ask the user in the conversation;
//   3. otherwise open a pending approval and tell the agent where a person approves it.

import {
  type HiddenField,
  hiddenFields,
  hiddenInWords,
  unreadableFields,
} from '../audit/hidden-fields';
import type { ApprovalStore, Json } from '../approvals/types';
import { canonicalJson } from '../audit/canonical';
import { sha256Hex } from '../encoding';
import { CONSUME_MESSAGES } from '../approvals/rules';
import { approvalTitle } from '../core/approval-title';
import type { Identity } from '../core/identity';
import type { BlastRadius } from '../proxmox/blast-radius';
import { blastRadiusLines } from '../proxmox/blast-radius-text';
import type { Decision } from '../policy/evaluate';
import type { ApprovalQuestion, AskNext, Conversation } from './conversation';

export type ApprovalOutcome =
  /** `upstream`: the requests the person approved, which are all the call may send. */
  | { kind: 'approved'; approvalId: string; upstream: Record<string, string> | null }
  | { kind: 'refused'; reason: string }
  | { kind: 'pending'; approval_id: string; approval_url: string; expires_at: string }
  /** A stateless client: the person is asked with the answer to this request (input_required). */
  | AskNext;

export interface ApprovalPort {
  resolve(required: Extract<Decision, { kind: 'approval_required' }>): Promise<ApprovalOutcome>;
  /** Gives back an approval spent on a call that was then refused, or failed before any write was sent. */
  restore(approvalId: string): Promise<void>;
}

/** The audit trail's approval_id for a call a user approved in the conversation. */
export const ELICITED = 'elicitation';

export interface ApprovalCall {
  tool: string;
  approvalId: string | undefined;
  /** Canonical arguments with sensitive values redacted: what a person is shown. */
  shownArgs: Record<string, Json>;
  /**
   * Reads the requests the call would send, as an approver's rows (redacted as the arguments
   * are); null when the tool cannot tell before running, or its plan cannot be read now.
   */
  upstream: () => Promise<Record<string, string> | null>;
  argsHmac: string;
  identity: Identity;
  /** Reads what the call would hit, for the person asked (null: the tool touches no one guest). */
  blastRadius: (() => Promise<BlastRadius | null>) | null;
  /**
   * The arguments a person must read to judge the call (ToolSpec.judgedBy): when shownArgs hides
   * or cuts a value in one, nobody is asked (../audit/hidden-fields.ts). Judged only when a
   * person would be asked, not on every call.
   */
  judgedBy: readonly string[];
}

export interface ApprovalDeps {
  store: () => ApprovalStore;
  /** Where the person can be asked about this call; null when the client cannot be asked. */
  conversation: Conversation | null;
  approvalUrl: (id: string) => string;
  /** This server's public origin, kept with an approval for the page's address in notifications. */
  origin: () => string;
  ttlMs: number;
  now: () => number;
}

export function approvalPort(call: ApprovalCall, deps: ApprovalDeps): ApprovalPort {
  return {
    async restore(approvalId) {
      if (approvalId !== ELICITED) await deps.store().restore(approvalId);
    },
    async resolve(required) {
      if (call.approvalId !== undefined) {
        const spent = await deps.store().consume(
          call.approvalId,
          {
            tool: call.tool,
            args_hmac: call.argsHmac,
            grant_id: call.identity.grantId,
            // An approval given under a looser rule than the one in force is not enough.
            approvals_required: required.approvalsRequired ?? 1,
            approvers: required.approvers ?? null,
          },
          deps.now(),
        );
        if (typeof spent === 'string') return { kind: 'refused', reason: CONSUME_MESSAGES[spent] };
        return { kind: 'approved', approvalId: call.approvalId, upstream: spent.upstream };
      }
      // Nobody is asked to approve what they would see as "[redacted]" or cut short.
      const unreadable = unreadableFields(call.shownArgs, call.judgedBy);
      if (unreadable.length)
        return { kind: 'refused', reason: unreadableReason(call.tool, unreadable) };
      const [radius, upstream] = await Promise.all([
        call.blastRadius ? call.blastRadius().catch(() => null) : null,
        readRequests(call),
      ]);
      const seen = { radius, upstream };
      // Named approvers, or a policy that wants approvals on the web page only: never in the
      // conversation, where the client (or the agent behind it) relays the question.
      if (deps.conversation && !required.approvers && !required.webOnly)
        return askInConversation(call, required, deps.conversation, seen, deps.now());
      const approval = await deps.store().create(
        {
          tool: call.tool,
          args: call.shownArgs,
          upstream,
          args_hmac: call.argsHmac,
          grant_id: call.identity.grantId,
          user_id: call.identity.userId,
          user_email: call.identity.email ?? null,
          client_id: call.identity.clientId,
          approvers: required.approvers ?? null,
          approvals_required: required.approvalsRequired ?? 1,
          origin: deps.origin(),
          notify: required.notify ?? null,
          blast_radius: radius,
          reason: required.reason,
          rule: required.rule,
        },
        deps.now(),
        deps.ttlMs,
      );
      if (!approval) {
        return {
          kind: 'refused',
          reason:
            'Too many calls from this client are already waiting for approval; ask a person to decide on them first.',
        };
      }
      return {
        kind: 'pending',
        approval_id: approval.id,
        approval_url: deps.approvalUrl(approval.id),
        expires_at: new Date(approval.expires_at).toISOString(),
      };
    },
  };
}

/**
 * The requests the call would send, read now. A plan that cannot be read (Proxmox down, a call
 * its tool would refuse) shows the person the arguments instead; the approved call then sends
 * nothing (../writes/kernel.ts sends only the requests a person approved).
 */
function readRequests(call: ApprovalCall): Promise<Record<string, string> | null> {
  return call.upstream().catch(() => null);
}

function unreadableReason(tool: string, unreadable: readonly HiddenField[]): string {
  return `${tool} would be judged by what ${unreadable.map((f) => f.field).join(', ')} holds, which an approver would not see (shown "[redacted]" or cut): ${hiddenInWords(unreadable)}. Nobody was asked and nothing was sent. Send the call without it where it is optional, in smaller parts where it is cut, or have the policy's editors take it off the tool's "sensitive" list so that approvers see it.`;
}

/** What the question tells the person they cannot see, and why (no line when nothing is hidden). */
function hiddenLines(shownArgs: Record<string, Json>): string[] {
  const hidden = hiddenFields(shownArgs);
  return hidden.length ? [`Hidden from you: ${hiddenInWords(hidden)}.`] : [];
}

async function askInConversation(
  call: ApprovalCall,
  required: Extract<Decision, { kind: 'approval_required' }>,
  conversation: Conversation,
  { radius, upstream }: { radius: BlastRadius | null; upstream: Record<string, string> | null },
  now: number,
): Promise<ApprovalOutcome> {
  const who = call.identity.email ?? call.identity.login ?? call.identity.userId;
  const params =
    upstream ??
    Object.fromEntries(
      Object.entries(call.shownArgs).map(([k, v]) => [
        k,
        typeof v === 'string' ? v : JSON.stringify(v),
      ]),
    );
  const lines = Object.entries(params).map(([k, v]) => `  ${k}=${v}`);
  const question: ApprovalQuestion = {
    message: [
      // The call in words, naming the guest once ("Destroy VM 104 (win11-lab) on pve2?").
      `${approvalTitle(call.tool, call.shownArgs as Record<string, unknown>, radius?.guest.name)}?`,
      `${required.reason}`,
      `${who} (client ${call.identity.clientId}) asks to run ${call.tool}${upstream ? ', sending Proxmox these parameters' : ' with these arguments'}:`,
      ...lines,
      ...hiddenLines(call.shownArgs),
      ...(radius ? blastRadiusLines(radius, now) : []),
      'Approve this exact call?',
    ].join('\n'),
    requestedSchema: {
      type: 'object',
      properties: { approve: { type: 'boolean', title: 'Approve this call', default: false } },
      required: ['approve'],
    },
  };
  let answer;
  try {
    answer = await conversation.ask(question, {
      tool: call.tool,
      argsHmac: call.argsHmac,
      grantId: call.identity.grantId,
      requests: await sha256Hex(canonicalJson(upstream)),
    });
  } catch (err) {
    return {
      kind: 'refused',
      reason: `Approval could not be asked for in the conversation (${err instanceof Error ? err.message.slice(0, 120) : 'no answer'}).`,
    };
  }
  if ('kind' in answer) return answer; // a stateless client: the call is suspended
  if (answer.refusal) return { kind: 'refused', reason: answer.refusal };
  // The client relays the question; the audit trail records that the approval came this way.
  if (answer.action === 'accept' && answer.content?.approve === true)
    return { kind: 'approved', approvalId: ELICITED, upstream };
  const how = answer.action === 'cancel' ? 'cancelled the approval request' : 'declined the call';
  return { kind: 'refused', reason: `${who} ${how}.` };
}
