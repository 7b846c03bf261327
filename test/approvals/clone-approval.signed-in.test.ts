// The worked example of docs/approvals.md, end to end: an agent clones the cloud-init template
// for a user; the policy wants a team lead's approval. The preview needs none; the confirmed call
// returns the approval link and the id the server chose; the lead sees every request of the plan
// (the password redacted) and approves; the retry with approval_id and that id runs the whole
// plan.
// And a config change's password never reaches the approval page or the question in the chat.

import { describe, expect, it } from 'vitest';
import type { ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { csrfOf, openAsDevUser } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { APPROVALS_POLICY } from '../support/policies/approvals';
import { usePolicy } from '../support/worker/policy';

usePolicy(APPROVALS_POLICY, asEditor());

const PASSWORD = 'cl0ud-init-pw';
const CLONE = {
  node: 'pve1',
  source_vmid: 9000,
  name: 'web-ann',
  ciuser: 'ann',
  cipassword: PASSWORD,
  ipconfig0: 'ip=dhcp',
  memory: 4096,
  resize: '+20G',
  start: true,
};

async function approve(
  id: string,
  user: string,
  groups: string,
): Promise<{ page: string; status: number }> {
  const browser = new Browser();
  const opened = await openAsDevUser(browser, `http://localhost/approvals/${id}`, user, groups);
  const res = await browser.post(`http://localhost/approvals/${id}`, {
    csrf: csrfOf(opened.html),
    decision: 'approve',
  });
  return { page: opened.html, status: res.status };
}

describe('an agent clones a template for a user, with a lead approving', () => {
  it('previews freely, waits for the lead, then runs the approved plan once', async () => {
    await sim.reset();
    await sim.config({ taskDurationMs: 100 });
    const { client } = await connectSignedIn('http', { user: 'ann@example.com', groups: 'ops' });
    const preview = await call(client, 'pve_clone_vm', CLONE);
    expect(preview.structuredContent).toMatchObject({ mode: 'preview', vmid: 106 });

    const pending = await call(client, 'pve_clone_vm', { ...CLONE, confirm: true, wait: true });
    expect(pending.isError).toBe(true);
    const { approval_id: id, approval_url: url } = pending.structuredContent as {
      approval_id: string;
      approval_url: string;
    };
    expect(text(pending)).toMatch(
      /^\[APPROVAL REQUIRED\] New VMs need a team lead's OK\. Nothing was sent to Proxmox\./,
    );
    expect(text(pending)).toContain(
      `Once it is approved, call pve_clone_vm again with the same arguments plus approval_id: "${id}" and newid: 106 and resize_disk: "scsi0".`,
    );
    expect(await sim.writes()).toEqual([]);

    const { page, status } = await approve(id, 'lead@example.com', 'ops,leads');
    expect(status).toBe(303);
    expect(page).toContain(url.replace('http://localhost', ''));
    // Every request of the plan, in order, each followed by its parameters.
    const rows = [
      ...page.matchAll(
        /<th scope="row"><code>([^<]+)<\/code><\/th><td><code class="uri">([^<]*)<\/code>/g,
      ),
    ].map((m) => `${m[1]} ${m[2]}`);
    expect(rows).toEqual([
      '1.request POST /nodes/pve1/qemu/9000/clone',
      '1.newid 106',
      '1.name web-ann',
      '2.request POST /nodes/pve1/qemu/106/config',
      '2.ciuser ann',
      '2.cipassword [redacted]',
      '2.ipconfig0 ip=dhcp',
      '2.memory 4096',
      '3.request PUT /nodes/pve1/qemu/106/resize',
      '3.disk scsi0',
      '3.size +20G',
      '4.request POST /nodes/pve1/qemu/106/status/start',
    ]);
    expect(page).not.toContain(PASSWORD);

    const done = await call(client, 'pve_clone_vm', {
      ...CLONE,
      confirm: true,
      wait: true,
      approval_id: id,
      newid: 106,
      resize_disk: 'scsi0',
    });
    expect(done.isError, text(done)).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ mode: 'created', vmid: 106, completed: true });
    expect(await sim.guest(106)).toMatchObject({
      status: 'running',
      pool: null,
      config: { ciuser: 'ann', name: 'web-ann' },
    });
    const again = await call(client, 'pve_clone_vm', {
      ...CLONE,
      confirm: true,
      approval_id: id,
      newid: 106,
      resize_disk: 'scsi0',
    });
    expect(text(again)).toMatch(/already used/);
    await client.close();
  });

  it("keeps a config change's cloud-init password out of the approval page and the question in the chat", async () => {
    const asked: ElicitRequest['params'][] = [];
    const chat = await connectSignedIn(
      'http',
      { user: 'bo@example.com', groups: 'ops' },
      undefined,
      (params) => {
        asked.push(params);
        return { action: 'accept', content: { approve: true } };
      },
    );
    const args = {
      node: 'pve1',
      vmid: 9000,
      config: { cipassword: PASSWORD, ciuser: 'bo' },
      confirm: true,
    };
    expect((await call(chat.client, 'pve_set_vm_config', args)).isError).toBeFalsy();
    expect(JSON.stringify(asked)).toContain('cipassword=[redacted]');
    expect(JSON.stringify(asked)).not.toContain(PASSWORD);
    await chat.client.close();

    const web = await connectSignedIn('http', { user: 'cy@example.com', groups: 'ops' });
    const pending = await call(web.client, 'pve_set_vm_config', args);
    const { page } = await approve(
      (pending.structuredContent as { approval_id: string }).approval_id,
      'cy@example.com',
      'ops',
    );
    expect(page).toContain('cipassword');
    expect(page).not.toContain(PASSWORD);
    await web.client.close();
  });
});
