// The pure helpers of the audit trail: JSON Lines and CSV export (RFC 4180 quoting, the
// formula-injection guard), canonical JSON, SHA-256, and argument redaction.

import { describe, expect, it } from 'vitest';
import { canonicalJson, redactArgs, redactUpstream, sha256Hex } from '../../src/audit/canonical';
import { propertyValue } from '../../src/core/property-value';
import { CSV_COLUMNS, csvCell, toCsv, toJsonLines } from '../../src/audit/export';
import type { StoredAuditRecord } from '../../src/audit/record';

const T0 = Date.parse('2026-11-30T12:00:00Z');

function stored(over: Partial<StoredAuditRecord> = {}): StoredAuditRecord {
  return {
    id: 1,
    ts: T0,
    request_id: 'r1',
    user_id: 'u1',
    user_email: 'alice@example.com',
    client_id: 'client',
    grant_id: 'grant',
    session: 'session',
    tool: 'pve_create_qemu_vm',
    arg_keys: ['node', 'name'],
    args_hmac: 'a'.repeat(64),
    args: { node: 'pve1', name: 'web-1' },
    decision: 'allow',
    rule: null,
    outcome: 'ok',
    error_kind: null,
    upstream_status: 200,
    latency_ms: 42,
    vmid: 101,
    upid: null,
    approval_id: null,
    approval_channel: null,
    policy_version: 1,
    user_groups: ['ops'],
    user_scopes: ['pve:read'],
    cluster: 'default',
    pve_token: 'alice@pve!mcp',
    upstream_ms: 12.5,
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    ...over,
  };
}

describe('toJsonLines', () => {
  it('writes one JSON object per line that parses back to the record', () => {
    const records = [stored(), stored({ id: 2, args: { text: 'line1\nline2' }, user_email: null })];
    const text = toJsonLines(records);
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.split('\n').slice(0, -1);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(records);
    expect(Object.keys(JSON.parse(lines[0]!) as object)).toEqual(
      CSV_COLUMNS.filter((c) => c !== 'time'),
    );
  });

  it('writes every column on every line: a record kept without a Proxmox token has it null', () => {
    const { pve_token: _, ...older } = stored();
    expect(JSON.parse(toJsonLines([older])) as object).toEqual({ ...older, pve_token: null });
    expect(toCsv([older], false)).toBe(toCsv([stored({ pve_token: null })], false));
    expect(
      toCsv([older], false).endsWith(',default,,12.5,4bf92f3577b34da6a3ce929d0e0e4736\r\n'),
    ).toBe(true);
  });

  it('writes nothing for no records', () => {
    expect(toJsonLines([])).toBe('');
  });
});

describe('toCsv', () => {
  it('writes the header and one CRLF-terminated row per record, in the fixed column order', () => {
    const text = toCsv([stored()]);
    const [head, row, end] = text.split('\r\n');
    expect(head).toBe(CSV_COLUMNS.join(','));
    expect(end).toBe('');
    expect(row).toBe(
      `1,${T0},2026-11-30T12:00:00.000Z,r1,u1,alice@example.com,client,grant,session,pve_create_qemu_vm,allow,,ok,,200,42,101,,,,1,"[""ops""]",` +
        `"[""node"",""name""]",${'a'.repeat(64)},"{""node"":""pve1"",""name"":""web-1""}","[""pve:read""]",default,alice@pve!mcp,12.5,4bf92f3577b34da6a3ce929d0e0e4736`,
    );
    expect(toCsv([stored()], false)).toBe(`${row}\r\n`);
  });

  it('quotes commas, quotes and line breaks inside a cell', () => {
    const row = toCsv([stored({ rule: 'a,b', error_kind: 'say "hi"', upid: 'one\r\ntwo' })], false);
    expect(row).toContain(',"a,b",ok,"say ""hi""",');
    expect(row).toContain(',"one\r\ntwo",');
  });

  it.each<[unknown, string]>([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tcmd', "'\tcmd"],
    ['\rcmd', `"'\rcmd"`],
    ['=HYPERLINK("http://x","y")', `"'=HYPERLINK(""http://x"",""y"")"`],
    ['plain', 'plain'],
    ['a=b', 'a=b'],
    [-5, '-5'],
    [0, '0'],
    [null, ''],
    [true, 'true'],
  ])('writes the cell %j as %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it('guards user text wherever it lands', () => {
    const row = toCsv([stored({ user_email: '=cmd|" /C calc"!A0', tool: '@x' })], false);
    expect(row).toContain(`,"'=cmd|"" /C calc""!A0",`);
    expect(row).toContain(",'@x,");
  });
});

describe('canonicalJson', () => {
  it.each<[string, unknown, string]>([
    ['sorts keys', { b: 1, a: 2 }, '{"a":2,"b":1}'],
    [
      'sorts nested keys, keeps array order',
      { z: { y: 1, x: [3, { d: 1, c: 2 }] } },
      '{"z":{"x":[3,{"c":2,"d":1}],"y":1}}',
    ],
    ['drops undefined members', { a: undefined, b: null }, '{"b":null}'],
    ['writes undefined array entries as null', [1, undefined, 2], '[1,null,2]'],
    ['escapes strings', { s: 'a"b\n\u2028' }, '{"s":"a\\"b\\n\u2028"}'],
    ['writes non-finite numbers as null', [Number.NaN, Infinity, -0], '[null,null,0]'],
    ['uses toJSON', { at: new Date(T0) }, '{"at":"2026-11-30T12:00:00.000Z"}'],
    ['gives null for undefined', undefined, 'null'],
    ['sorts by code unit', { b: 1, B: 2, a: 3, é: 4 }, '{"B":2,"a":3,"b":1,"é":4}'],
  ])('%s', (_name, value, text) => {
    expect(canonicalJson(value)).toBe(text);
  });

  it('is the same text whatever the key order', () => {
    expect(canonicalJson({ node: 'pve1', memory: 2048, net0: { a: 1, b: 2 } })).toBe(
      canonicalJson({ net0: { b: 2, a: 1 }, memory: 2048, node: 'pve1' }),
    );
  });

  it('throws on a cycle and on a BigInt', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(TypeError);
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { a: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"a":1},{"a":1}]');
  });
});

describe('sha256Hex', () => {
  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ])('hashes %j to the known vector', async (text, hex) => {
    expect(await sha256Hex(text)).toBe(hex);
  });
});

describe('redactArgs', () => {
  const long = 'a'.repeat(1500);
  it.each<[string, Record<string, unknown>, string[], Record<string, unknown>]>([
    [
      'a built-in name',
      { password: 'hunter2', name: 'vm' },
      [],
      { password: '[redacted]', name: 'vm' },
    ],
    [
      'built-in names whatever their case',
      { CIPassword: 'x', OTP: 'k', Token: 't', SECRET: 's', Api_Key: 'a', apiKey: 'b' },
      [],
      {
        CIPassword: '[redacted]',
        OTP: '[redacted]',
        Token: '[redacted]',
        SECRET: '[redacted]',
        Api_Key: '[redacted]',
        apiKey: '[redacted]',
      },
    ],
    [
      'a policy name whatever its case',
      { myKey: 'x', other: 1 },
      ['MYKEY'],
      { myKey: '[redacted]', other: 1 },
    ],
    ['a non-string sensitive value', { password: ['k1', 'k2'] }, [], { password: '[redacted]' }],
    [
      'names inside object arguments too (config, params)',
      { config: { cipassword: 'x', memory: 1 }, params: { Password: 'y' } },
      [],
      { config: { cipassword: '[redacted]', memory: 1 }, params: { Password: '[redacted]' } },
    ],
    [
      'a policy name inside an object argument',
      { config: { description: 'x' } },
      ['description'],
      { config: { description: '[redacted]' } },
    ],
    [
      'a parsed property string inside an object by its text',
      { config: { net0: propertyValue('virtio,bridge=vmbr0', { bridge: 'vmbr0' }) } },
      [],
      { config: { net0: 'virtio,bridge=vmbr0' } },
    ],
    [
      'an object the caller sent with text and fields keys by all its members',
      { params: { text: 'a', fields: 'b', storage: 'local' } },
      [],
      { params: { text: 'a', fields: 'b', storage: 'local' } },
    ],
    [
      'long strings by cutting them',
      { description: long },
      [],
      { description: `${'a'.repeat(1000)}…[cut 500 chars]` },
    ],
    [
      'long strings in nested values too',
      { meta: { notes: [long] } },
      [],
      { meta: { notes: [`${'a'.repeat(1000)}…[cut 500 chars]`] } },
    ],
    [
      'no other value',
      { memory: 2048, onboot: true, tags: ['a'], none: null },
      [],
      { memory: 2048, onboot: true, tags: ['a'], none: null },
    ],
    [
      'every Proxmox secret parameter of the raw API',
      {
        params: {
          'encryption-key': 'k',
          keyring: 'r',
          'eab-hmac-key': 'h',
          'client-key': 'c',
          totp: 't',
          http_proxy: 'p',
          storage: 's',
        },
      },
      [],
      {
        params: {
          'encryption-key': '[redacted]',
          keyring: '[redacted]',
          'eab-hmac-key': '[redacted]',
          'client-key': '[redacted]',
          totp: '[redacted]',
          http_proxy: '[redacted]',
          storage: 's',
        },
      },
    ],
    [
      'a policy params.<name> in params only',
      { params: { 'site-secret': 'x', other: 'y' }, 'site-secret': 'top' },
      ['params.site-secret'],
      { params: { 'site-secret': '[redacted]', other: 'y' }, 'site-secret': 'top' },
    ],
  ])('redacts %s', (_name, args, sensitive, expected) => {
    expect(redactArgs(args, sensitive)).toEqual(expected);
  });

  it('keeps a key named __proto__ as a plain entry of the copy', () => {
    const out = redactArgs(
      JSON.parse('{"params": {"__proto__": {"password": "x"}, "a": 1}}') as Record<string, unknown>,
      [],
    );
    expect(Object.getPrototypeOf(out.params)).toBe(Object.prototype);
    expect(Object.keys(out.params as object)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(out)).toBe('{"params":{"__proto__":{"password":"[redacted]"},"a":1}}');
  });

  it('never splits a surrogate pair and leaves its input alone', () => {
    const args = { s: `${'a'.repeat(999)}😀tail` };
    const out = redactArgs(args, []);
    expect(out.s).toBe(`${'a'.repeat(999)}…[cut 6 chars]`);
    expect(args.s).toHaveLength(1005);
  });
});

describe('redactUpstream', () => {
  it.each<
    [string, Record<string, string>, string[], Record<string, unknown>, Record<string, string>]
  >([
    [
      'a whole object argument: every key of it',
      { request: 'POST /storage', a: '1', b: 'two' },
      ['params'],
      { params: { a: 1, b: 'two' } },
      { request: 'POST /storage', a: '[redacted]', b: '[redacted]' },
    ],
    [
      'a config object argument: its keys, not the others',
      { memory: '2048', description: 'secret text', digest: 'abc' },
      ['config'],
      { config: { memory: 2048, description: 'secret text' } },
      { memory: '[redacted]', description: '[redacted]', digest: 'abc' },
    ],
    [
      'an argument sent under another name, by its value',
      { 'ssh-public-keys': 'ssh-ed25519 AAAA k', hostname: 'ct1' },
      ['ssh_public_keys'],
      { ssh_public_keys: 'ssh-ed25519 AAAA k', hostname: 'ct1' },
      { 'ssh-public-keys': '[redacted]', hostname: 'ct1' },
    ],
    [
      'a list argument, as Proxmox joins it',
      { tags: 'a;b', name: 'x' },
      ['tags'],
      { tags: ['a', 'b'] },
      { tags: '[redacted]', name: 'x' },
    ],
    [
      'nothing else',
      { request: 'GET /version', node: 'pve1' },
      ['description'],
      { node: 'pve1' },
      { request: 'GET /version', node: 'pve1' },
    ],
  ])('redacts %s', (_label, params, sensitive, args, expected) => {
    expect(redactUpstream(params, sensitive, args)).toEqual(expected);
  });

  it('redacts the Proxmox parameters an approver sees by the same names, step prefixes and params.<name> included', () => {
    expect(
      redactUpstream(
        {
          request: 'POST /storage',
          'encryption-key': 'k',
          'site-secret': 's',
          '2.cipassword': 'c',
          '2.description': 'd',
          storage: 'x',
        },
        ['params.site-secret', 'description'],
        {},
      ),
    ).toEqual({
      request: 'POST /storage',
      'encryption-key': '[redacted]',
      'site-secret': '[redacted]',
      '2.cipassword': '[redacted]',
      '2.description': '[redacted]',
      storage: 'x',
    });
  });
});
