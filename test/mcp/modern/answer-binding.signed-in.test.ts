// A 2026-07-28 client's person answers the question with the next request; the answer covers
// the requests the question showed. When what the call acts on changes in between, so that the
// same arguments would send other requests, the answer is declined and nothing is sent.

import { beforeAll, describe, expect, it } from 'vitest';
import { asEditor } from '../../support/worker/oauth';
import { sim } from '../../support/worker/sim';
import { rawCall, signedInToken } from '../../support/worker/eras';
import { usePolicy } from '../../support/worker/policy';

usePolicy(
  {
    version: '1',
    default: 'deny',
    tools: {
      pve_list_backups: {},
      pve_restore_backup: {
        action: 'require_approval',
        reason: 'A person confirms each restore.',
      },
    },
  },
  asEditor(),
);

beforeAll(async () => {
  await sim.reset();
  await sim.config({ taskDurationMs: 50 });
});

describe('an answer in the conversation (2026-07-28)', () => {
  it('is declined, nothing sent, once a guest appeared where the restore it approved was a new guest', async () => {
    const token = await signedInToken('una@example.com');
    const listed = await rawCall(token, 'pve_list_backups', {
      node: 'pve1',
      storage: 'local',
      vmid: 100,
    });
    const [backup] = (listed.result!.structuredContent as { backups: { volid: string }[] }).backups;
    const args = { node: 'pve1', volume: backup!.volid, vmid: 3303, force: true, confirm: true };
    const asked = await rawCall(token, 'pve_restore_backup', args);
    expect(asked.result).toMatchObject({ resultType: 'input_required' });
    // The question shows the request as it would go now: a new guest, without force.
    expect(JSON.stringify(asked.result)).toContain('unique=1');
    expect(JSON.stringify(asked.result)).not.toContain('force=1');

    // Someone makes a VM 3303 in Proxmox meanwhile: the same arguments would now replace it.
    const made = await sim.api('POST', '/nodes/pve1/qemu', { vmid: '3303', name: 'appeared' });
    expect(made.status).toBe(200);
    await expect.poll(async () => (await sim.guest(3303)).config.name).toBe('appeared');
    await sim.clearLog();
    const answered = await rawCall(
      token,
      'pve_restore_backup',
      args,
      {
        inputResponses: { approve: { action: 'accept', content: { approve: true } } },
        requestState: asked.result!.requestState,
      },
      2,
    );
    expect(JSON.stringify(answered.result)).toMatch(
      /given for other requests than the call would send now/,
    );
    expect(await sim.writes()).toEqual([]);
    expect((await sim.guest(3303)).config.name).toBe('appeared');
  });
});
