// The list of Proxmox parameters whose values are secrets (src/proxmox/secret-params.ts) against
// the real PVE 9.1.3 API schema, which marks none: every parameter, of any endpoint, whose
// description speaks of a password, a secret, a private key, a token, a keyring, a passphrase,
// an HMAC or a one-time password is either in the list or named below as not secret, with why.
// A new PVE release that adds such a parameter fails this test until someone decides.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_SENSITIVE } from '../../src/audit/canonical';
import { SECRET_PARAMS } from '../../src/proxmox/secret-params';
import { shownParams } from '../../src/writes/shown-params';
import { findSchemaFile, requireInCi } from '../support/pve-schema-load.ts';

const schemaFile = findSchemaFile(path.resolve(import.meta.dirname, '../..'));
requireInCi(
  schemaFile,
  'The PVE 9.1.3 API schema (the secret parameter list is checked against it)',
);

const SECRET_WORDS =
  /password|passphrase|secret|private key|\btoken\b|keyring|hmac|one-time|\bkey\b|credential|otp|totp|ticket/i;

/** Parameters whose description matches, but whose value is not a secret. */
const NOT_SECRET: Record<string, string> = {
  ciuser: 'a user name (the password is cipassword)',
  certkey: 'a path to a key file on the node, not the key',
  crypted: 'a flag saying the password was already crypt()ed',
  'eab-kid':
    'the key identifier of an ACME external account binding (the HMAC key is eab-hmac-key)',
  expire: "an API token's expiry date",
  'generate-password': 'a flag',
  'master-pubkey': 'a public key',
  privsep: "an API token's privilege separation flag",
  'ssh-public-keys': 'public keys',
  sshkeys: 'public keys (shown in full: who gets in is what an approver must read)',
  tokens: 'a list of API token ids for an ACL, not their secrets',
  tokenid: "an API token's id",
  userid: 'a user or token id',
  username: 'a user name',
  'config-keys': 'names of Ceph config keys',
  'target-disk': 'a config key name',
  'target-volume': 'a config key name',
  boot: 'the boot order (its description mentions a "key")',
  hotplug: 'hotplug features',
  iface: 'an interface name',
  sync_attributes: 'LDAP attribute names',
  vcpus: 'a CPU count',
  authid: 'a user or token id',
  author: 'a name',
  authsupported: 'a capability list',
  keyboard: 'a keyboard layout',
  'lock-token': 'a lock id for a storage volume operation, not a credential',
  'token-coefficient': 'a number',
  webauthn: 'relying-party settings (origin, id), no secret',
  tfa: 'the name of a second-factor method',
  'release-lock': 'a flag releasing the SDN lock (its lock-token is an id)',
  force: 'a flag (its description names the lock token)',
  full: 'a flag listing users with their token ids',
  path: 'the ACL path a ticket is checked against',
  privs: 'privilege names a ticket is checked against',
  port: 'the port a VNC ticket is checked against',
};

interface Param {
  name: string;
  description: string;
  where: string;
}

function allParams(file: string): Param[] {
  const out: Param[] = [];
  const visit = (node: Record<string, unknown>): void => {
    const info = (node.info ?? {}) as Record<
      string,
      { parameters?: { properties?: Record<string, Record<string, unknown>> } }
    >;
    for (const [method, def] of Object.entries(info)) {
      for (const [name, schema] of Object.entries(def.parameters?.properties ?? {})) {
        const description = `${String(schema.description ?? '')} ${String(schema.verbose_description ?? '')}`;
        out.push({ name, description, where: `${method} ${String(node.path)}` });
      }
    }
    for (const child of (node.children ?? []) as Record<string, unknown>[]) visit(child);
  };
  for (const root of JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>[])
    visit(root);
  return out;
}

describe.skipIf(!schemaFile)('the secret parameter list, against the PVE 9.1.3 schema', () => {
  const params = schemaFile ? allParams(schemaFile) : [];

  it('reads the whole schema', () => {
    expect(params.length).toBeGreaterThan(2900);
  });

  it('lists every parameter the schema describes as a secret, or says why it is not one', () => {
    const undecided = [
      ...new Set(
        params
          .filter(
            (p) =>
              SECRET_WORDS.test(p.description) &&
              !SECRET_PARAMS.has(p.name) &&
              !(p.name in NOT_SECRET),
          )
          .map((p) => `${p.name} (${p.where})`),
      ),
    ];
    expect(undecided).toEqual([]);
  });

  it('lists only names Proxmox has, and none it also calls not secret', () => {
    const names = new Set(params.map((p) => p.name));
    expect([...SECRET_PARAMS].filter((n) => !names.has(n))).toEqual([]);
    expect([...SECRET_PARAMS].filter((n) => n in NOT_SECRET)).toEqual([]);
    expect(Object.keys(NOT_SECRET).filter((n) => !names.has(n))).toEqual([]);
  });
});

describe('where the list applies', () => {
  it('redacts each secret in previews and results, and in the audit trail', () => {
    const sent = Object.fromEntries([...SECRET_PARAMS].map((n) => [n, `v-${n}`]));
    expect(Object.values(shownParams({ ...sent, storage: 'pbs1' }))).toEqual([
      ...[...SECRET_PARAMS].map(() => '[redacted]'),
      'pbs1',
    ]);
    for (const name of SECRET_PARAMS) expect(BUILT_IN_SENSITIVE).toContain(name);
  });
});
