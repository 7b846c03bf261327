// Where the policy comes from: the POLICY variable (JSON text) when set, else the bundled
// policy.json. Parsed once per distinct text.

import bundled from '../../policy.json';

export interface PolicySource {
  origin: 'POLICY' | 'policy.json';
  document: unknown;
  error?: string;
}

let cached: { text: string | undefined; source: PolicySource } | undefined;

export function policySource(text: string | undefined): PolicySource {
  if (cached && cached.text === text) return cached.source;
  let source: PolicySource;
  if (text === undefined || text.trim() === '') {
    source = { origin: 'policy.json', document: bundled };
  } else {
    try {
      source = { origin: 'POLICY', document: JSON.parse(text) as unknown };
    } catch (err) {
      source = { origin: 'POLICY', document: null, error: `POLICY is not valid JSON: ${err instanceof Error ? err.message : 'parse error'}` };
    }
  }
  cached = { text, source };
  return source;
}
