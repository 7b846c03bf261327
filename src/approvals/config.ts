// Where approvals live: one Approvals Durable Object. (How long they last is APPROVAL_TTL_MINUTES,
// parsed in ../config.)

import type { AppEnv } from '../env';
import { objectPort, type RpcOf } from '../stores/stubs';
import type { Approvals } from './approvals-store';

export const APPROVALS_OBJECT = 'approvals';
export type ApprovalsObject = RpcOf<
  Approvals,
  'create' | 'get' | 'decide' | 'consume' | 'restore' | 'spendOnce' | 'pending'
>;

/** The approvals object, every call bounded by a deadline (a hung store denies, never hangs). */
export function approvalStore(env: AppEnv): ApprovalsObject {
  return objectPort<Approvals, keyof ApprovalsObject>(env.APPROVALS, APPROVALS_OBJECT, 'approvals');
}
