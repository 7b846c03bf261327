// The `cluster` argument is there only where the server reaches more than one cluster: with one,
// tools/list is byte for byte what it was before clusters existed, and `cluster` is refused as any
// argument a tool does not take.

import { describe, expect, it } from 'vitest';
import { toolSet } from '../../src/calls/tool-list';
import { TOOLS } from '../../src/tools';

const listed = (clusters?: string[]) => JSON.stringify(toolSet(TOOLS, clusters).all());

/**
 * tools/list for one cluster as it was before clusters existed (the parent of c5e3ef7, the first clusters commit):
 * its size and SHA-256. Clusters must not change a byte of it; a deliberate change to a tool's
 * definition (a new tool, a reworded description) updates both here, with the reason.
 */
const BEFORE_CLUSTERS = {
  bytes: 37_573,
  sha256: 'cc5097cf697421d303dd6321dafd67267bfe2d390c2f7d84159cdd8d3d49e4fd',
};

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

describe('the cluster argument', () => {
  it('leaves a one-cluster tools/list byte for byte what it was before clusters', async () => {
    const now = listed(['default']);
    expect(new TextEncoder().encode(now).length).toBe(BEFORE_CLUSTERS.bytes);
    expect(await sha256(now)).toBe(BEFORE_CLUSTERS.sha256);
  });

  it('leaves a one-cluster tools/list as it was, and refuses cluster there', () => {
    const before = listed();
    expect(listed(['default'])).toBe(before);
    expect(listed(['lab'])).toBe(before);
    for (const def of toolSet(TOOLS, ['lab']).all())
      expect(Object.keys(def.inputSchema.properties as object), def.name).not.toContain('cluster');
    const input = toolSet(TOOLS, ['lab']).get('pve_stop_vm')!.input;
    const refused = input.safeParse({ node: 'pve1', vmid: 100, cluster: 'lab' });
    expect(refused.success).toBe(false);
    expect(JSON.stringify(refused.error?.issues)).toContain('cluster');
  });

  it('adds it to every tool with several, one of their names, and refuses any other', () => {
    const set = toolSet(TOOLS, ['lab', 'prod']);
    for (const def of set.all())
      expect(def.inputSchema.properties, def.name).toMatchObject({
        cluster: { type: 'string', enum: ['lab', 'prod'] },
      });
    const input = set.get('pve_stop_vm')!.input;
    expect(input.safeParse({ node: 'pve1', vmid: 100, cluster: 'prod' }).success).toBe(true);
    expect(input.safeParse({ node: 'pve1', vmid: 100 }).success).toBe(true);
    expect(input.safeParse({ node: 'pve1', vmid: 100, cluster: 'staging' }).success).toBe(false);
  });
});
