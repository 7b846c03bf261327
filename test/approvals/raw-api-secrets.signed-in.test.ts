// The raw API's secret parameters (a PBS storage's password and encryption key, a Ceph keyring,
// an ACME account's HMAC key...) and a parameter the policy names sensitive (`params.<name>`)
// never show: not in the preview, not on the approval page an approver opens, not in the audit
// trail or its export — while the parameters that are not secret do. A call carrying the
// policy's own is never put to an approver: they could not read part of what it writes.
//   pve_api_request: require_approval, sensitive ["params.site-secret"]; admin@example.com is an admin.

import { beforeAll, describe, expect, it } from 'vitest';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { openAsDevUser } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { auditRecords } from '../support/worker/audit';
import { APPROVALS_POLICY } from '../support/policies/approvals';
import { usePolicy } from '../support/worker/policy';
import { freshDeployment } from '../support/worker/fresh';

freshDeployment();
usePolicy(APPROVALS_POLICY, asEditor());

const SECRETS = {
  password: 'pbs-Passw0rd-91',
  'encryption-key': '{"kdf":null,"key":"q1w2e3r4t5y6u7i8o9p0"}',
  keyring: 'AQBkey-ring-material-xyz==',
  'eab-hmac-key': 'hmac-Zx8Yw7Vu6Ts5',
  'site-secret': 'site-Only-Known-Here',
};
const PLAIN = {
  storage: 'pbs-offsite',
  type: 'pbs',
  server: 'pbs.example.com',
  datastore: 'store1',
  username: 'backup@pbs',
};
const ARGS = { method: 'POST', path: '/storage', params: { ...PLAIN, ...SECRETS } };

function expectNoSecret(where: string, body: string, except: string[] = []): void {
  for (const [name, value] of Object.entries(SECRETS))
    if (!except.includes(name)) expect(body, `${where}: ${name}`).not.toContain(value);
}

beforeAll(() => sim.reset());

describe('secret parameters of pve_api_request', () => {
  it('are redacted in the preview, on the approval page, in the audit record and its export', async () => {
    const { client } = await connectSignedIn('http', {
      user: 'olga@example.com',
      groups: 'ops',
      scopes: ['pve:raw'],
    });
    await sim.clearLog();

    const preview = await call(client, 'pve_api_request', ARGS);
    expect(preview.structuredContent!.mode, text(preview)).toBe('preview');
    expectNoSecret('preview', JSON.stringify(preview));
    expect(
      (preview.structuredContent!.request as { params: Record<string, string> }).params,
    ).toMatchObject({
      ...PLAIN,
      password: '[redacted]',
      'encryption-key': '[redacted]',
      keyring: '[redacted]',
      'eab-hmac-key': '[redacted]',
      // Not a Proxmox secret, but the policy's: it does not come back in the preview either.
      'site-secret': '[redacted]',
    });

    // The policy's own hidden parameter is part of what the call writes: nobody is asked.
    const refused = await call(client, 'pve_api_request', { ...ARGS, confirm: true });
    expect(refused.isError, text(refused)).toBe(true);
    expect(text(refused)).toContain('would be judged by what params.site-secret holds');
    expect(refused.structuredContent!.approval_id).toBeUndefined();
    expectNoSecret('refusal', JSON.stringify(refused));
    expect(await sim.requests()).toEqual([]);

    const { 'site-secret': _own, ...params } = ARGS.params;
    const pending = await call(client, 'pve_api_request', { ...ARGS, params, confirm: true });
    const id = pending.structuredContent!.approval_id as string;
    expect(id, text(pending)).toBeTruthy();
    expect(await sim.writes()).toEqual([]);
    const page = await openAsDevUser(
      new Browser(),
      `http://localhost/approvals/${id}`,
      'admin@example.com',
      'ops',
    );
    expect(page.status).toBe(200);
    expect(page.html).toContain('pbs.example.com');
    expect(page.html).toContain('encryption-key');
    expectNoSecret('approval page', page.html);

    const records = await auditRecords(
      (r) => r.tool === 'pve_api_request' && r.user_id === 'olga@example.com',
      3,
    );
    expect(records).toHaveLength(3);
    for (const r of records) {
      expectNoSecret('audit record', JSON.stringify(r));
      expect(r.args).toMatchObject({ params: { ...PLAIN, password: '[redacted]' } });
    }
    expect(
      records.filter((r) => (r.args.params as Record<string, unknown>)['site-secret']),
    ).toEqual([
      expect.objectContaining({
        args: expect.objectContaining({
          params: expect.objectContaining({ 'site-secret': '[redacted]' }),
        }),
      }),
      expect.objectContaining({
        args: expect.objectContaining({
          params: expect.objectContaining({ 'site-secret': '[redacted]' }),
        }),
      }),
    ]);

    const admin = new Browser();
    await openAsDevUser(admin, 'http://localhost/admin', 'admin@example.com', 'ops');
    for (const format of ['jsonl', 'csv']) {
      const exported = await admin.get(
        `http://localhost/admin/audit?format=${format}&tool=pve_api_request`,
      );
      expect(exported.status).toBe(200);
      const body = await exported.text();
      expect(body).toContain('pbs.example.com');
      expectNoSecret(`export ${format}`, body);
    }
    await client.close();
  });
});
