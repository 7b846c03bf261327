// The audit trail's Durable Objects: all records in one, and the count of records that could
// not be written in another (so a failing main object can still be counted).
export const AUDIT_OBJECT = 'audit';
export const AUDIT_LOST_OBJECT = 'audit-lost';
