// A cluster of PVE_CLUSTERS may not name the Worker's own settings as its secrets or binding
// (src/config/clusters.ts OWN_SETTINGS): the list must hold every setting and binding the Worker
// reads, as src/env.ts declares them, or a new one could be sent to a Proxmox as a token.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OWN_SETTINGS } from '../../src/config/own-settings';

describe('OWN_SETTINGS', () => {
  it('is every member of AppEnv (src/env.ts)', () => {
    const text = readFileSync(new URL('../../src/env.ts', import.meta.url), 'utf8');
    const body = text.slice(text.indexOf('export interface AppEnv'));
    const declared = [
      ...body.slice(0, body.indexOf('\n}')).matchAll(/^ {2}([A-Z][A-Z0-9_]*)\??:/gm),
    ].map((m) => m[1]);
    expect(declared.length).toBeGreaterThan(30);
    expect([...OWN_SETTINGS].sort()).toEqual([...new Set(declared)].sort());
  });
});
