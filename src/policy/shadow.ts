// What a shadow policy's disagreement with the active one on a live call is recorded as
// (../calls/run-call.ts finds it; the policy store counts and keeps it).

/** A live call on which the shadow version would have decided otherwise than the active one. */
export interface ShadowDisagreement {
  ts: number;
  request_id: string;
  /** The caller's email, else their user id: how a person is named. */
  user: string;
  /** The caller's user id (absent on disagreements recorded before it was kept). */
  user_id?: string;
  tool: string;
  /** The cluster the call was for, where the server reaches several. */
  cluster?: string;
  active: { version: number; decision: string; rule: string | null };
  shadow: { version: number; decision: string; rule: string | null };
  /** The facts of its guest the call's record keeps (as a replay's changes carry them). */
  guest?: Record<string, unknown>;
}
