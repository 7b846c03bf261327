// The scrubber alone: each transformed form of a secret is replaced over exactly the span it
// covers, and ordinary text (another UUID, words, unrelated base64, a 64 KiB JSON document) is
// left exactly as it was.

import { describe, expect, it } from 'vitest';
import { hiddenValues, REDACTED, redactAll, redactArgs } from '../../src/audit/canonical';
import {
  chainScrubbers,
  hiddenValuesScrubber,
  SCRUBBED,
  scrubberFor,
} from '../../src/secrets/scrub';

const SECRET = '5f1c2b7e-9a3d-4c1e-8b2a-0d9e7f6a1b3c';
const ACCESS = 'access-secret-0123456789abcdef';
const scrub = scrubberFor([SECRET, ACCESS, undefined, '  ']);
const X = SCRUBBED;

const codes = (s: string): number[] => [...new TextEncoder().encode(s)];
const each = (s: string, f: (c: number, i: number) => string): string => codes(s).map(f).join('');
const hex2 = (c: number): string => c.toString(16).padStart(2, '0');
const urlSafe = (s: string): string => s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
/** `text` with [start, text.length - tail) replaced by the marker: what a base64 hit leaves. */
const cut = (text: string, start: number, tail: number): string =>
  `${text.slice(0, start)}${X}${text.slice(text.length - tail)}`;

// base64 of a text holding the secret: the characters that carry only the prefix's bits stay,
// and so do the one or two at each edge that carry a neighbour's bits too.
const BASIC = btoa(`root@pam!mcp:${SECRET}`); // the secret starts at byte 13: alignment 1
const HEADER = btoa(`PVEAPIToken=root@pam!mcp=${SECRET}`); // byte 25: alignment 1
const PADDED = btoa(`ab${SECRET}z`); // byte 2: alignment 2
// The secret starts at byte 40 (alignment 1) and its base64 crosses the line break after column 76.
const WRAPPED = urlSafe(
  btoa(`Authorization: PVEAPIToken=root@pam!mcp=${SECRET}\r\nAccept: */*\r\n`),
).replace(/.{76}/g, '$&\n');

describe('scrubberFor', () => {
  it.each([
    ['as configured', `token ${SECRET} end`, `token ${X} end`],
    ['upper case', `token ${SECRET.toUpperCase()} end`, `token ${X} end`],
    [
      'mixed case',
      `t=${each(SECRET, (c, i) => String.fromCharCode(c)[i % 2 ? 'toUpperCase' : 'toLowerCase']())};`,
      `t=${X};`,
    ],
    ['without hyphens', `(${SECRET.replace(/-/g, '')})`, `(${X})`],
    ['with other separators', `[${SECRET.replace(/-/g, ':')}]`, `[${X}]`],
    ['wrapped at 12 columns', `a\r\n${SECRET.replace(/.{12}/g, '$&\r\n')}b`, `a\r\n${X}\r\nb`],
    ['a space between every character', `> ${[...SECRET].join(' ')} <`, `> ${X} <`],
    [
      'percent-encoded, every character',
      `/x/${each(SECRET, (c) => `%${hex2(c).toUpperCase()}`)}/y`,
      `/x/${X}/y`,
    ],
    [
      'percent-encoded, some characters, lower-case hex',
      `?t=${each(SECRET, (c, i) => (i % 3 ? String.fromCharCode(c) : `%${hex2(c)}`))}&n=1`,
      `?t=${X}&n=1`,
    ],
    ['percent-encoded twice', `?t=${each(SECRET, (c) => `%25${hex2(c)}`)}`, `?t=${X}`],
    [
      'HTML character references, decimal and hex',
      `<b>${each(SECRET, (c, i) => (i % 2 ? `&#${c};` : `&#X${hex2(c)}`))}</b>`,
      `<b>${X}</b>`,
    ],
    [
      'HTML references escaped again (&amp;#)',
      `<p>${each(SECRET, (c) => `&amp;#${c};`)}</p>`,
      `<p>${X}</p>`,
    ],
    ['\\u escapes', `"${each(SECRET, (c) => `\\u${c.toString(16).padStart(4, '0')}`)}"`, `"${X}"`],
    [
      '\\x and \\u{} escapes, mixed',
      `'${each(SECRET, (c, i) => (i % 2 ? `\\x${hex2(c)}` : `\\u{${hex2(c)}}`))}'`,
      `'${X}'`,
    ],
    [
      'inside JSON inside JSON',
      JSON.stringify(JSON.stringify({ m: SECRET.toUpperCase().replace(/-/g, '\n') })),
      JSON.stringify(JSON.stringify({ m: X })),
    ],
    ['base64 of user:secret (HTTP Basic)', `Basic ${BASIC}`, `Basic ${cut(BASIC, 18, 3)}`],
    ['base64 of the whole PVEAPIToken header', HEADER, cut(HEADER, 34, 3)],
    ['base64 at the third alignment', PADDED, cut(PADDED, 3, 2)],
    ['URL-safe base64, no padding, wrapped at 76 columns', WRAPPED, cut(WRAPPED, 54, 21)],
    ['hex', `0x${each(SECRET, hex2)}.`, `0x${X}.`],
    [
      'hex, upper case, colon-separated',
      `${each(SECRET, (c) => hex2(c).toUpperCase()).replace(/../g, '$&:')}`,
      `${X}:`,
    ],
    ['glued to an escape-like "%"', `100%${SECRET.toUpperCase()}`, `100%${X}`],
    ['with backslashes for hyphens ("\\0" reads as an escape)', SECRET.replace(/-/g, '\\'), X],
    ['percent-encoded after an encoded "%"', `%25${each(SECRET, (c) => `%${hex2(c)}`)}`, `%25${X}`],
    [
      'the Access secret upper-cased, underscores for hyphens',
      `CF_ACCESS: ${ACCESS.toUpperCase().replace(/-/g, '_')}!`,
      `CF_ACCESS: ${X}!`,
    ],
    ['both secrets, next to each other', `${SECRET}${ACCESS.toUpperCase()}`, `${X}${X}`],
    ['twice in one text', `${SECRET} and ${SECRET.replace(/-/g, '')}`, `${X} and ${X}`],
  ])('replaces the secret %s, over exactly its span', (_label, text, expected) => {
    expect(scrub.text(text)).toBe(expected);
  });

  it.each([
    ['a UUID that is not the secret', '5f1c2b7e-9a3d-4c1e-8b2a-0d9e7f6a1b3d'],
    ['the secret with one character left out', SECRET.slice(0, 20) + SECRET.slice(21)],
    [
      'words',
      'Parameter verification failed. VM 100 qmp command failed - got timeout; access secret rotation due',
    ],
    [
      'percent-encoding, references and escapes of other text',
      'a%20b %41%42 &amp; &lt;b&gt; &#65; \\u0041\\n\\\\ %2541 &percnt; \\',
    ],
    ['a long base64 blob of unrelated data', btoa(String.fromCharCode(...pseudoRandomBytes(3000)))],
    ['a hex dump of unrelated data', pseudoRandomBytes(500).map(hex2).join(' ')],
    ['the Access secret with a character changed', ACCESS.replace('9', '8').toUpperCase()],
    ['text with no ASCII in it', 'Ошибка: 認証に失敗しました 🙃'],
    ['the empty string', ''],
  ])('leaves %s exactly as it is', (_label, text) => {
    expect(scrub.text(text)).toBe(text);
  });

  it('leaves a 64 KiB JSON document exactly as it is, and deep() hands back the same value', () => {
    const doc = vmList(64 * 1024);
    const json = JSON.stringify(doc);
    expect(json.length).toBeGreaterThanOrEqual(64 * 1024);
    expect(scrub.text(json)).toBe(json);
    expect(scrub.deep(doc)).toBe(doc);
  });

  it('finds a transformed secret anywhere in a 64 KiB JSON document and removes only it', () => {
    const doc = vmList(64 * 1024);
    const mid = doc.data.length >> 1;
    doc.data[mid]!.description = `see ${SECRET.toUpperCase()}`;
    const clean = scrub.deep(doc);
    expect(clean.data[mid]!.description).toBe(`see ${X}`);
    expect(clean).toEqual({
      data: doc.data.map((vm, i) => (i === mid ? { ...vm, description: `see ${X}` } : vm)),
    });
  });

  it.each([
    ['a key', { [`x-${SECRET.toUpperCase()}`]: 1 }, { [`x-${X}`]: 1 }],
    [
      'a nested string split across lines',
      { a: [{ b: `got ${SECRET.slice(0, 9)}\n${SECRET.slice(9)}` }] },
      { a: [{ b: `got ${X}` }] },
    ],
    [
      'a string that holds JSON-escaped text',
      { m: `{"t":"${each(SECRET, (c) => `\\u${c.toString(16).padStart(4, '0')}`)}"}` },
      { m: `{"t":"${X}"}` },
    ],
    ['base64 in an array', ['ok', `Basic ${BASIC}`], ['ok', `Basic ${cut(BASIC, 18, 3)}`]],
    // Split between two values: in neither alone. Each value loses its part.
    [
      'a secret split between two lines of a task log',
      { log: ['start', `token ${SECRET.slice(0, 18)}`, `${SECRET.slice(18)} end`] },
      { log: ['start', `token ${X}`, `${X} end`] },
    ],
    [
      'a secret split between a key and its value',
      { [`k-${SECRET.slice(0, 20)}`]: `${SECRET.slice(20)}` },
      { [`k-${X}`]: X },
    ],
  ])('deep() scrubs %s', (_label, value, expected) => {
    expect(scrub.deep(value)).toEqual(expected);
  });

  it('scrubs base64 of a header wrapped into separate log lines, leaving no line that decodes to the secret', () => {
    const lines = WRAPPED.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(1);
    const out = scrub.deep({ log: lines }).log;
    expect(out).toHaveLength(lines.length);
    expect(out.some((l, i) => l !== lines[i])).toBe(true);
    // Whatever is left, joined again, no longer decodes to anything holding the secret.
    const left = out
      .join('')
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .replace(/\[secret removed\]/g, '');
    for (let at = 0; at < 4; at++) {
      const chunk = left.slice(at);
      const whole = chunk.slice(0, chunk.length - (chunk.length % 4));
      expect(atob(whole)).not.toContain(SECRET);
    }
    expect(out.join('\n')).not.toContain(SECRET);
  });

  it('leaves secrets shorter than 6 characters alone, and short derived forms too', () => {
    expect(scrubberFor(['abc12']).text('abc12 ABC12')).toBe('abc12 ABC12');
    // "ab-cd-ef" is 6 letters once its hyphens go: too few to match across ordinary words.
    expect(scrubberFor(['ab-cd-ef']).text('ab-cd-ef AB-CD-EF ab cd ef')).toBe(
      `${X} AB-CD-EF ab cd ef`,
    );
  });

  it('does nothing without secrets', () => {
    const value = { a: SECRET };
    expect(scrubberFor([undefined, '']).deep(value)).toBe(value);
    expect(scrubberFor([]).text(SECRET)).toBe(SECRET);
  });
});

/** Bytes from a fixed linear congruential sequence: unrelated data, the same on every run. */
function pseudoRandomBytes(n: number): number[] {
  let x = 12345;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return (x >>> 16) & 0xff;
  });
}

interface VmList {
  data: {
    vmid: number;
    name: string;
    node: string;
    status: string;
    tags: string;
    maxmem: number;
    description: string;
  }[];
}

/** A /cluster/resources-like list whose JSON is at least `bytes` long. */
function vmList(bytes: number): VmList {
  const data: VmList['data'] = [];
  const ids = pseudoRandomBytes(16 * 1024)
    .map(hex2)
    .join('');
  for (let i = 0, size = 0; size < bytes; i++, size += JSON.stringify(data.at(-1)).length + 1) {
    const id = ids.slice(i * 32, i * 32 + 32).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
    data.push({
      vmid: 100 + i,
      name: `web-${i}.lab.example.com`,
      node: `pve${i % 3}`,
      status: i % 2 ? 'running' : 'stopped',
      tags: 'lab;prod',
      maxmem: 4294967296,
      description: `Owner: team-${i % 7}\nSee https://wiki.example.com/vm/${i}?a=1&b=2 "quoted" 50% done \\ ${id}`,
    });
  }
  return { data };
}

describe("a call's hidden values", () => {
  it('are what redaction hid, at any depth, and nothing it kept', () => {
    const args = {
      node: 'pve1',
      password: 'root-Pw-771',
      config: { cipassword: 'ci-Pw-88812', memory: 2048, description: 'notes kept' },
      command: ['echo', 'argv-Secret-1'],
    };
    const redacted = redactArgs(args, ['command', 'config.description']);
    expect(hiddenValues(args, redacted).sort()).toEqual(
      ['argv-Secret-1', 'ci-Pw-88812', 'echo', 'notes kept', 'root-Pw-771'].sort(),
    );
    expect(hiddenValues(args, redactAll(args))).toContain('pve1');
  });

  it('leave a result as the audit trail would show them, in any encoding, with the redaction marker', () => {
    const hidden = hiddenValuesScrubber(['argv-Secret-1', 'ab'], REDACTED);
    expect(hidden.deep({ stdout: 'x argv-Secret-1 y', url: 'a=argv%2DSecret%2D1' })).toEqual({
      stdout: `x ${REDACTED} y`,
      url: `a=${REDACTED}`,
    });
    // Values too short to search for are left to the structured redaction alone.
    expect(hidden.text('ab cd')).toBe('ab cd');
    const both = chainScrubbers(scrub, hidden);
    expect(both.text(`${SECRET} argv-Secret-1`)).toBe(`${X} ${REDACTED}`);
  });
});
