// /admin as an operator reads it: each call with the guest it was about and its (redacted)
// argument values, counters against their limits ("1 / 3 per hour"), and the policy folded to
// one line with its fingerprint. Policy (test/support/policies/auth.ts): pve_list_vms 3/hour per user and 2/hour
// per grant; pve_create_qemu_vm allowed. Read by the administrator, admin@example.com.

import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/encoding';
import { openAsDevUser } from '../support/form-browser';
import { auditRecords } from '../support/worker/audit';
import { call, text } from '../support/worker/mcp';
import {
  asEditor,
  Browser,
  connectSignedIn,
  ORIGIN,
  TestOAuthClient,
} from '../support/worker/oauth';
import { PER_USER_POLICY } from '../support/policies/auth';
import { usePolicy } from '../support/worker/policy';
import { freshDeployment } from '../support/worker/fresh';

freshDeployment();
const policy = usePolicy(PER_USER_POLICY, asEditor());

const DESCRIPTION = `Build box for the ${'very '.repeat(30)}long project`;

let html: string;
let vmid: number;
let grant: string;

beforeAll(async () => {
  const { client } = await connectSignedIn(
    'http',
    { user: 'carol@example.com', groups: 'ops' },
    new TestOAuthClient("Carol's client"),
  );
  const listed = await call(client, 'pve_list_vms', { node: 'pve2' });
  expect(listed.isError, text(listed)).toBeFalsy();
  const created = await call(client, 'pve_create_qemu_vm', {
    node: 'pve1',
    name: 'carol-build',
    memory: 2048,
    description: DESCRIPTION,
    confirm: true,
  });
  expect(created.isError, text(created)).toBeFalsy();
  vmid = created.structuredContent!.vmid as number;
  const [record] = await auditRecords(
    (r) => r.user_id === 'carol@example.com' && r.tool === 'pve_create_qemu_vm',
  );
  grant = record!.grant_id;
  await client.close();
  ({ html } = await openAsDevUser(
    new Browser(),
    `${ORIGIN}/admin?user=carol@example.com`,
    'admin@example.com',
    'ops',
  ));
});

const rowOf = (tool: string): string =>
  html.split('<tr>').find((r) => r.includes(`<td data-label="Tool" class="tool"><code>${tool}`))!;

describe('the recent calls on /admin', () => {
  it('show the node and vmid a call was about', () => {
    expect(rowOf('pve_create_qemu_vm')).toContain(`pve1 / <strong>${vmid}</strong>`);
    expect(rowOf('pve_list_vms')).toContain('<span class="nowrap">pve2</span>');
  });

  it('show argument values as key=value, a long one cut with its whole text in the title', () => {
    const row = rowOf('pve_create_qemu_vm');
    expect(row).toContain('<code>name=carol-build</code>');
    expect(row).toContain('<code>memory=2048</code>');
    expect(row).toContain('<code>confirm=true</code>');
    const cut = /<code title="([^"]*)">description=([^<]*)<\/code>/.exec(row)!;
    expect(cut[1]).toBe(DESCRIPTION);
    expect(cut[2]).toMatch(/^Build box for the very .*…\[cut \d+ chars\]$/);
    expect(cut[2]!.length).toBeLessThan(70);
  });
});

describe('the counters on /admin', () => {
  it("show each count beside its limit's max and window", () => {
    // A counter's key may break after its slash (<wbr>) only.
    const counter = (object: string, key: string): string =>
      html
        .split('<tr>')
        .find(
          (r) =>
            r.includes(`<code>${object}</code>`) &&
            r.includes(`<code>${key.replace('/', '/<wbr>')}</code>`),
        )!;
    expect(counter('user:email:carol@example.com', 'pve_list_vms/per_user')).toContain(
      '<strong>1</strong> / 3 per hour',
    );
    expect(counter(`grant:${grant}`, 'pve_list_vms/per_grant')).toContain(
      '<strong>1</strong> / 2 per hour',
    );
  });
});

describe('the policy on /admin', () => {
  it('is folded behind one line: its version, valid, its SHA-256 and size', async () => {
    // The text as the policy API stored it (the object, indented by two).
    const text = JSON.stringify(PER_USER_POLICY, null, 2);
    const sha = (await sha256Hex(text)).slice(0, 12);
    expect(html).toContain('<details class="policy" id="policy-text">');
    expect(html).toContain(
      `<summary><strong>version ${policy.version}</strong> · valid · <span title="SHA-256 of the text as given">sha256 <code>${sha}</code></span> · ${text.length} bytes</summary>`,
    );
  });
});
