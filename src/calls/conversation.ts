// Asking the person behind a client about one exact call, in the conversation. A 2025 session
// pushes the question to the client and waits (elicitation/create); a 2026-07-28 client is
// stateless, so the call is suspended instead: the answer comes back with the next request
// (input_required, then a retry carrying it). The pipeline sees one interface for both.

/** The question put to the person: a message and a form with one boolean. */
export interface ApprovalQuestion {
  message: string;
  requestedSchema: {
    type: 'object';
    properties: { approve: { type: 'boolean'; title: string; default: boolean } };
    required: ['approve'];
  };
}

export interface ApprovalAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
  /** The answer is not one that may approve this call (given for another call, or used before): why. */
  refusal?: string;
}

/** What an answer must belong to: the exact call it approves. */
export interface CallBinding {
  tool: string;
  argsHmac: string;
  grantId: string;
  /** A digest of the requests the question shows (../writes/kernel.ts sends only those). */
  requests: string;
}

/**
 * A stateless conversation cannot wait for the answer: the call is suspended, and the question
 * goes out (input_required) to come back with the next request.
 */
export interface AskNext {
  kind: 'ask_next_request';
  question: ApprovalQuestion;
  binding: CallBinding;
}

export interface Conversation {
  /** The person's answer about this call, or (a stateless client) that the call must wait for it. */
  ask(question: ApprovalQuestion, binding: CallBinding): Promise<ApprovalAnswer | AskNext>;
}

/**
 * Whether a client's declared `elicitation` capability lets us ask in the conversation: form mode
 * declared, or an empty object (2025-06-18 meant form; newer clients list the modes they support).
 */
export function elicitsForms(elicitation: unknown): boolean {
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  const modes = elicitation as { form?: unknown; url?: unknown };
  return modes.form !== undefined || modes.url === undefined;
}
