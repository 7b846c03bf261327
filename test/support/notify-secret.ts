// The notify project's signing secret for its `json` receiver (vitest.config.ts configures it;
// the tests verify each signature with it).

export const NOTIFY_SECRET = 'receiver-secret-0123456789';
