// The `cluster` argument is there only where the server reaches more than one cluster: with one,
// tools/list is byte for byte what it was before clusters existed, and `cluster` is refused as any
// argument a tool does not take.

import { describe, expect, it } from 'vitest';
import { toolSet } from '../../src/calls/tool-list';
import { TOOLS } from '../../src/tools';

const listed = (clusters?: string[]) => JSON.stringify(toolSet(TOOLS, clusters).all());

describe('the cluster argument', () => {
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
