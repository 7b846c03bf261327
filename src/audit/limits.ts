// How long the audit trail keeps records and how many at most: AUDIT_RETENTION_DAYS and
// AUDIT_MAX_ROWS, read by the configuration (for /health and /admin) and by the AuditLog object
// itself (which prunes to them).

import { intSetting } from '../settings';

/** Audit retention and row cap (the AuditLog object prunes to them). */
export function auditLimits(
  vars: { AUDIT_RETENTION_DAYS?: string; AUDIT_MAX_ROWS?: string },
  problems: string[] = [],
): { retentionDays: number; maxRows: number } {
  return {
    retentionDays: intSetting(
      vars.AUDIT_RETENTION_DAYS,
      'AUDIT_RETENTION_DAYS',
      90,
      1,
      3_650,
      problems,
    ),
    maxRows: intSetting(
      vars.AUDIT_MAX_ROWS,
      'AUDIT_MAX_ROWS',
      1_000_000,
      1_000,
      50_000_000,
      problems,
    ),
  };
}
