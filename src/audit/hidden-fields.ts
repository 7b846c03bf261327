// What a person asked to approve a call cannot read, and whether they may decide without it. The
// arguments they are shown are the ones the audit trail keeps (./canonical.ts): every value the
// policy marks `sensitive` and every name on the built-in list is "[redacted]", at any depth
// (`config.cipassword`, `params.data`, an item of a list), and a string over MAX_ARG_STRING is
// cut. Each such value is one of two kinds:
//   - not needed to judge the call: a credential on the built-in list, whose value nobody judges
//     (what is approved is that a password is set, not which one), wherever it is; or any value
//     of an argument the call is not judged by (ToolSpec.judgedBy: a VM's description, a
//     backup's notes). The person is told what is hidden and why, and decides;
//   - what the call runs, reads or writes: any other value hidden or cut inside an argument the
//     call is judged by — the argument whole, a built-in name that there is the content itself
//     (`params.data` is a node's /etc/hosts), a name the policy hides (`params.site-secret`,
//     `config.description`: the server cannot tell that a person need not read it). Nobody is
//     asked: the call is refused, naming the field.
// Pure: the shown arguments in, the fields out, so the approval page and the notifications list
// what an approval stored without storing more.

import { MAX_ARG_STRING, REDACTED, wasCut } from './canonical';

export interface HiddenField {
  /** Where, as a policy path below `args.` (`config.cipassword`, `command.2`). */
  field: string;
  /** Why it is hidden, in a few words a person reads beside it. */
  why: string;
}

/**
 * Built-in secret names whose value an approver does not judge: that one is set is the decision,
 * and the value would add nothing a person could check. Each with why.
 */
const CREDENTIALS: Readonly<Record<string, string>> = {
  password: 'a password: you approve that one is set, not which',
  cipassword: "the guest's cloud-init password: you approve that one is set, not which",
  'confirmation-password': 'the password Proxmox asks of the person confirming a change',
  'encryption-key': 'a backup encryption key: you approve that one is set, not which',
  keyring: 'a Ceph keyring: a credential',
  'client-key': 'a TLS client key: a credential',
  'eab-hmac-key': "an ACME account's HMAC key: a credential",
  token: 'a token: a credential',
  secret: 'a secret: a credential',
  otp: 'a one-time password',
  totp: 'a one-time password secret',
  ticket: 'a session ticket: a credential',
  vncticket: 'a console ticket: a credential',
  api_key: 'an API key: a credential',
  apikey: 'an API key: a credential',
};

/**
 * Built-in secret names that are content where the call is judged by them: hidden because some
 * endpoint takes a credential under the name, but elsewhere the value is what is written or sent.
 * A person cannot approve a write they cannot read, so a judged value under one of these names
 * refuses the call.
 */
const CONTENT: Readonly<Record<string, string>> = {
  data: "what is written: a node's /etc/hosts, or an ACME DNS plugin's API credentials",
  value: 'what is written under a name (a setting, a TFA entry): it may be a secret',
  key: 'a private key or subscription key, or the keys a VM is sent: what is written or typed',
  header: "a notification target's HTTP headers: its credentials, and what it sends",
  http_proxy: "where the node's outbound traffic goes, with any user and password in it",
};

const POLICY_HIDDEN = 'the policy marks it sensitive';
const CUT = `longer than ${MAX_ARG_STRING.toLocaleString('en-US')} characters: shown cut`;

/** Every value the shown arguments hide or cut, with why; the order is the arguments'. */
export function hiddenFields(shown: Readonly<Record<string, unknown>>): HiddenField[] {
  return found(shown).map(({ path, cut }) => {
    const leaf = leafOf(path);
    return {
      field: path.join('.'),
      why: cut ? CUT : (CREDENTIALS[leaf] ?? CONTENT[leaf] ?? POLICY_HIDDEN),
    };
  });
}

/**
 * The hidden values a person would have to read to judge the call (`judgedBy`: the arguments it
 * runs, reads or writes), with why each cannot be shown: when there is one, nobody is asked.
 */
export function unreadableFields(
  shown: Readonly<Record<string, unknown>>,
  judgedBy: readonly string[],
): HiddenField[] {
  const out: HiddenField[] = [];
  const written = 'and it is what the call runs, reads or writes';
  for (const { path, cut } of found(shown)) {
    if (!judgedBy.includes(path[0]!)) continue;
    const field = path.join('.');
    const leaf = leafOf(path);
    if (cut) out.push({ field, why: `${CUT}, ${written}` });
    else if (path.length === 1) out.push({ field, why: `${POLICY_HIDDEN}, ${written}` });
    else if (Object.hasOwn(CONTENT, leaf)) out.push({ field, why: CONTENT[leaf]! });
    else if (!Object.hasOwn(CREDENTIALS, leaf))
      out.push({ field, why: `${POLICY_HIDDEN}, ${written}` });
  }
  return out;
}

/** The hidden fields in words, one sentence: "config.cipassword (a password: ...); ...". */
export function hiddenInWords(fields: readonly HiddenField[]): string {
  return fields.map((f) => `${f.field} (${f.why})`).join('; ');
}

function found(value: unknown, path: string[] = [], out: { path: string[]; cut: boolean }[] = []) {
  if (value === REDACTED && path.length) out.push({ path, cut: false });
  else if (typeof value === 'string' && wasCut(value)) out.push({ path, cut: true });
  else if (Array.isArray(value))
    for (const [i, item] of value.entries()) found(item, [...path, String(i)], out);
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) found(item, [...path, key], out);
  return out;
}

/** The name a value is hidden by: the last key that is not a list index, lower-cased. */
function leafOf(path: readonly string[]): string {
  return ([...path].reverse().find((segment) => !/^\d+$/.test(segment)) ?? '').toLowerCase();
}
