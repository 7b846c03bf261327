// /health with PVE_IDENTITIES (this project's: alice's and bob's tokens, which hold what their
// people need; dave's, which holds nothing; root@pam's, which holds everything): each mapped
// token is read with itself from GET /access/permissions, and the operator is told of the token
// that holds nothing and of the one that holds more than the tools need. Anyone else: the names of
// the failing checks only.

import { beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { forgetTokenChecks } from '../../src/health/identity-check';
import { forgetProbes } from '../../src/health/proxmox-probe';
import { getHealth } from '../support/worker/health';
import { ORIGIN } from '../support/worker/mcp';
import { codeFlowTokens, registerClient } from '../support/worker/oauth';
import { tokenOf } from '../support/worker/people';
import { sim } from '../support/worker/sim';

const TOKENS = inject('simulatorTokens') as Record<string, { id: string; secret: string }>;

// PVEVMUser (PVE 9's VM privileges of the user and audit groups), the role alice's token has on
// the lab pool: its user has more there, and privilege separation keeps to what both hold.
const ALICE_ON_LAB = [
  'VM.Audit',
  'VM.Backup',
  'VM.Config.CDROM',
  'VM.Config.Cloudinit',
  'VM.Console',
  'VM.GuestAgent.Audit',
  'VM.GuestAgent.FileRead',
  'VM.GuestAgent.FileSystemMgmt',
  'VM.GuestAgent.FileWrite',
  'VM.PowerMgmt',
];

describe('GET /health with PVE_IDENTITIES', () => {
  let token: string;
  beforeAll(async () => {
    const clientId = await registerClient('health of identities');
    const login = { user: 'admin@example.com', groups: 'ops' };
    token = (await codeFlowTokens(clientId, login, ['policy:read'])).access_token;
  });
  beforeEach(async () => {
    forgetProbes();
    forgetTokenChecks();
    await sim.clearLog();
  });

  it('names the token that holds nothing and the one that holds too much, reading each as itself', async () => {
    const { body } = await getHealth(ORIGIN, token);
    const { identities } = body as unknown as {
      identities: { tokens: number; holds: { token: string; on?: Record<string, string[]> }[] };
    };
    expect(identities.tokens).toBe(4);
    // What each holds on /, /vms and each pool, as Proxmox answers for that token.
    const holds = Object.fromEntries(identities.holds.map((h) => [h.token, h.on]));
    expect(holds[TOKENS.dave!.id]).toEqual({ '/': [], '/vms': [] });
    expect(holds[TOKENS.alice!.id]).toEqual({ '/': [], '/vms': [], '/pool/lab': ALICE_ON_LAB });
    expect(holds[TOKENS.admin!.id]!['/']).toEqual(
      expect.arrayContaining(['Sys.Modify', 'VM.Allocate']),
    );
    const problems = (body.problems ?? []).filter((p) => p.check === 'identities');
    expect(problems.map((p) => p.message)).toEqual([
      `${TOKENS.dave!.id} (PVE_IDENTITIES) holds no privileges at all: Proxmox answers it with empty lists, not refusals, so its people see an empty cluster.`,
      `${TOKENS.admin!.id} (PVE_IDENTITIES) holds more than this server's tools need: Permissions.Modify, Realm.Allocate, Realm.AllocateUser, User.Modify, Group.Allocate, Sys.Modify, Sys.PowerMgmt.`,
    ]);
    expect(problems[0]!.fix).toContain('Grant its user a role');
    // Each token read what it holds with itself, once.
    const reads = (await sim.requests()).filter((r) => r.path === '/api2/json/access/permissions');
    expect(reads.map(tokenOf).sort()).toEqual(
      [TOKENS.alice!.id, TOKENS.bob!.id, TOKENS.dave!.id, TOKENS.admin!.id].sort(),
    );
    expect(JSON.stringify(body)).not.toContain(TOKENS.dave!.secret);

    // Anyone else: which checks fail, and nothing of the tokens.
    const anonymous = await getHealth(ORIGIN);
    expect(anonymous.body.failing).toContain('identities');
    expect(JSON.stringify(anonymous.body)).not.toContain(TOKENS.dave!.id);
    expect(anonymous.body.identities).toEqual({ tokens: 4 });
  });
});
