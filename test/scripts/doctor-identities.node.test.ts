// `npm run doctor` against `npm start` with PVE_IDENTITIES (people mapped to the simulator's
// tokens of alice, dave and root@pam, their secrets in the environment as npm start reads
// them): the identities check fails naming the token that holds nothing and the one that holds
// more than the tools need, and lists under it what each token holds on /, /vms and each pool,
// as Proxmox answers for that token.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { startNpm, type NpmStart } from '../support/npm-start.ts';
import { runDoctor } from '../support/run-doctor.ts';

const { alice, dave, admin } = SIMULATOR_TOKENS;

describe('npm run doctor with PVE_IDENTITIES', () => {
  let server: NpmStart;
  beforeAll(async () => {
    server = await startNpm({
      PVE_IDENTITIES: JSON.stringify([
        { match: 'alice@example.com', token_id: alice.id, token_secret_var: 'ALICE_TOKEN_SECRET' },
        { match: 'group:auditors', token_id: dave.id, token_secret_var: 'DAVE_TOKEN_SECRET' },
        { match: 'group:root', token_id: admin.id, token_secret_var: 'ROOT_TOKEN_SECRET' },
      ]),
      ALICE_TOKEN_SECRET: alice.secret,
      DAVE_TOKEN_SECRET: dave.secret,
      ROOT_TOKEN_SECRET: admin.secret,
    });
  }, 70_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("names the token with nothing and the one with too much, and lists each token's privileges", async () => {
    const { status, output, line } = await runDoctor(server.url);
    const identities = line('identities');
    expect(identities, output).toMatch(/^FAIL /);
    expect(identities).toContain(
      `${dave.id} (PVE_IDENTITIES) holds no privileges at all: Proxmox answers it with empty lists, not refusals`,
    );
    expect(identities).toContain(
      `${admin.id} (PVE_IDENTITIES) holds more than this server's tools need: Permissions.Modify,`,
    );
    // Under the check, a line per token, as Proxmox answers for it.
    const lines = output.split('\n');
    const under = lines.slice(lines.indexOf(identities) + 1, lines.indexOf(identities) + 4);
    expect(under.map((l) => l.trim())).toEqual([
      `${alice.id}: on / nothing; on /vms nothing; on /pool/lab VM.Audit, VM.Backup, VM.Config.CDROM, VM.Config.Cloudinit, VM.Console, VM.GuestAgent.Audit, VM.GuestAgent.FileRead, VM.GuestAgent.FileSystemMgmt, VM.GuestAgent.FileWrite, VM.PowerMgmt`,
      `${dave.id}: on / nothing; on /vms nothing`,
      expect.stringMatching(
        new RegExp(
          `^${admin.id.replace(/[!.]/g, '\\$&')}: on / .*Permissions\\.Modify.*; on /vms `,
        ),
      ),
    ]);
    // Nothing of a secret.
    for (const token of [alice, dave, admin]) expect(output).not.toContain(token.secret);
    expect(status).toBe(1);
  }, 60_000);
});
