// Proxmox API parameters whose values are secrets (PVE 9.1): passwords, keys, tokens, one-time
// codes, and the few whose values may carry credentials (a proxy URL with user:password, a
// webhook's headers, an ACME DNS plugin's API data). Their values never come back in a preview
// or a result, and never reach an approval page, a log line or the audit trail. PVE's API schema
// does not mark secrets, so test/proxmox/secret-params.node.test.ts checks this list against it: every
// parameter whose description speaks of a password, secret, private key, token, keyring,
// passphrase, HMAC or one-time password is listed here, or named there as not secret, with why.
// A name that is a secret in one endpoint and not in another (`key`: a private key, a
// subscription key, a VM's sendkey) is redacted everywhere: showing too little is the safe side.

export const SECRET_PARAMS: ReadonlySet<string> = new Set([
  'password',
  'cipassword',
  'confirmation-password',
  'encryption-key',
  'keyring',
  'client-key',
  'eab-hmac-key',
  'key',
  'token',
  'secret',
  'header',
  'data',
  'otp',
  'totp',
  'value',
  'vncticket',
  'ticket',
  'http_proxy',
]);
