// Reads the audit trail from inside workerd. Records are written after the answer (waitUntil),
// so these wait until the records asked for are there.

import { env } from 'cloudflare:workers';
import type { AuditLogRpc } from '../../../src/audit/audit-log';
import type { StoredAuditRecord } from '../../../src/audit/record';
import type { AppEnv } from '../../../src/env';

export function auditStub(name = 'audit'): AuditLogRpc {
  const ns = (env as unknown as AppEnv).AUDIT;
  return ns.get(ns.idFromName(name)) as unknown as AuditLogRpc;
}

/** At least `n` records matching `match`, oldest first; throws after about 5 s. */
export async function auditRecords(
  match: (r: StoredAuditRecord) => boolean,
  n = 1,
): Promise<StoredAuditRecord[]> {
  for (let i = 0; i < 50; i++) {
    const mine = (await auditStub().query({ limit: 1000 })).records.filter(match);
    if (mine.length >= n) return mine.sort((a, b) => a.id - b.id);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('audit records did not arrive');
}
