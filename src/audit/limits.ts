// Whether the audit trail is on (AUDIT_ENABLED), how long it keeps records and how many at most
// (AUDIT_RETENTION_DAYS, AUDIT_MAX_ROWS): read by the configuration (for /health and /admin) and
// by the objects that write it (the AuditLog prunes to them; the policy store audits its changes).

import { intSetting } from '../core/settings';

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

/** AUDIT_ENABLED: `false` turns the audit trail off; anything but true/false is a problem (it stays on). */
export function auditEnabled(vars: { AUDIT_ENABLED?: string }, problems: string[] = []): boolean {
  const text = (vars.AUDIT_ENABLED ?? '').trim().toLowerCase();
  if (text === 'false') return false;
  if (text !== '' && text !== 'true')
    problems.push(
      `AUDIT_ENABLED must be true or false, got ${JSON.stringify(vars.AUDIT_ENABLED?.slice(0, 20))}; the audit stays on`,
    );
  return true;
}
