// Secrets the projects' receivers are configured with (vitest.config.ts): the notify project's
// signing secret for its `json` receiver (the tests verify each signature with it), and the key
// spans are exported with (the tests find it in each export's headers, and nowhere else).

export const NOTIFY_SECRET = 'receiver-secret-0123456789';

export const OTLP_KEY = 'otlp-key-5e3b9c1f0a7d4e28';
