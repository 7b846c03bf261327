// Where approvals live (one Approvals Durable Object) and how long they last (APPROVAL_TTL_MINUTES,
// default 15, at most a day).

import type { AppEnv } from '../env';
import type { ApprovalStore } from './types';
import { timedStub } from '../stores/deadline';

export const APPROVALS_OBJECT = 'approvals';
const DEFAULT_TTL_MIN = 15;

export function approvalTtlMs(env: AppEnv): number {
  const minutes = Number(env.APPROVAL_TTL_MINUTES ?? DEFAULT_TTL_MIN);
  return (Number.isInteger(minutes) && minutes >= 1 && minutes <= 1440 ? minutes : DEFAULT_TTL_MIN) * 60_000;
}

/** The approvals object, every call bounded by a deadline (a hung store denies, never hangs). */
export function approvalStore(env: AppEnv): ApprovalStore {
  const ns = env.APPROVALS;
  return timedStub(ns.get(ns.idFromName(APPROVALS_OBJECT)), 'approvals') as unknown as ApprovalStore;
}
