// The skeleton of a text: what is left after undoing the escapes an echo may wrap a secret in
// (percent-escapes, HTML character references, JS/JSON escapes), lower-casing, and dropping every
// character that is not an ASCII letter or digit. A secret upper-cased, with its hyphens dropped
// or changed, wrapped at a column, or escaped character by character has the same skeleton as
// the secret, so one indexOf on the skeleton finds all those forms; the mapped skeletons also
// give each character's span of the original text, so a hit can be replaced whole.
// Pure; linear in the text.
//
// Decoding is one pass, plus another (up to `passes`) only where a pass itself produced a "%",
// "&" or "\" (as "%2541" and "&amp;#97;" do), so nested encodings come undone and nothing else
// is read twice. A run of backslashes reads as one: JSON inside JSON ("\\\\u0061", "\\n") comes
// undone in the first pass. Decoding can also eat: an escape-like neighbour glued to a secret
// ("%" + "5E1C0D2A-…", a "\0" as separator) takes some of its characters. So the raw skeleton
// (nothing decoded) and each pass's are all searched; a form is found if any of them holds it.
// HTML tags are not read as separators: a "<" before a secret would hide it whenever no ">"
// closed it.

import { AMPERSAND, BACKSLASH, NONE, PERCENT, decodeAt } from './escapes';

/** A text's skeleton, and for each of its characters i the span original[from[i], to[i]). */
export interface Skeleton {
  text: string;
  from: Int32Array;
  to: Int32Array;
}

/**
 * The skeletons alone (no spans): what the common case, a text with no secret in it, needs. It
 * reads the text's UTF-8 bytes (escapes are ASCII; any other byte is just not a letter or digit)
 * and builds the raw skeleton and the first pass's in one loop; the rare text that needs a
 * second pass goes the long way.
 */
export function skeletonsOf(text: string, passes: number): string[] {
  if (!MAY_ESCAPE.test(text)) return [text.replace(NOT_ALNUM, '').toLowerCase()];
  const buffer = new Uint8Array(text.length * 3);
  const bytes = buffer.subarray(0, UTF8.encodeInto(text, buffer).written);
  const n = bytes.length;
  const raw = new Uint8Array(n);
  const sk = new Uint8Array(n);
  let again = false;
  let r = 0;
  let m = 0;
  // The same reading as rawSkeleton and decodePass, kept inline and on one table lookup a
  // character: this loop runs on every tool result.
  for (let i = 0; i < n; ) {
    const c = bytes[i]!;
    const kind = KIND[c]!;
    if (kind !== ESCAPE) {
      if (kind !== 0) raw[r++] = sk[m++] = kind;
      i++;
      continue;
    }
    const got = decodeAt(bytes, i);
    if (got === NONE) {
      i++;
      continue;
    }
    const len = got >>> 8;
    for (let j = i; j < i + len; j++)
      if (SKELETAL[bytes[j]!] !== 0) raw[r++] = SKELETAL[bytes[j]!]!;
    const d = got & 0xff;
    if (KIND[d] === ESCAPE) again = true;
    else if (KIND[d] !== 0) sk[m++] = KIND[d]!;
    i += len;
  }
  if (again && passes > 1) return mappedSkeletonsOf(text, passes).map((s) => s.text);
  return [ASCII.decode(raw.subarray(0, r)), ASCII.decode(sk.subarray(0, m))];
}

/**
 * The raw skeleton (nothing decoded) and each pass's, with spans, for replacing what was found.
 * Every one is searched: the raw one keeps what an escape-like neighbour ("%5E", "\x", "\0")
 * would eat, and an earlier pass keeps what a later one would.
 */
export function mappedSkeletonsOf(text: string, passes: number): Skeleton[] {
  let layer = charLayer(text);
  const skeletons = [rawSkeleton(layer)];
  for (let pass = 1; ; pass++) {
    const { next, skeleton, again } = decodePass(layer);
    skeletons.push(skeleton);
    if (!again || pass >= passes) return skeletons;
    layer = next;
  }
}

/** A text being decoded: ASCII codes (0x80 for anything else) and each one's original span. */
interface Layer {
  codes: Uint8Array;
  start: Int32Array;
  end: Int32Array;
  /** After the first pass: 1 where the previous pass decoded an escape's start; only there are escapes read. */
  produced: Uint8Array | null;
}

const MAY_ESCAPE = /[%&\\]/;
const NOT_ALNUM = /[^A-Za-z0-9]+/g;
/** Lower-case ASCII letters and digits as themselves (upper case folded), everything else 0. */
const SKELETAL = new Uint8Array(256).map((_, c) => {
  const ch = String.fromCharCode(c);
  return /^[A-Za-z0-9]$/.test(ch) ? ch.toLowerCase().charCodeAt(0) : 0;
});
const STARTS_ESCAPE = new Uint8Array(256).map((_, c) =>
  c === PERCENT || c === AMPERSAND || c === BACKSLASH ? 1 : 0,
);
/** SKELETAL and STARTS_ESCAPE in one: the skeleton character, ESCAPE, or 0 (letters and digits are 0x30 up). */
const ESCAPE = 1;
const KIND = SKELETAL.map((s, c) => (STARTS_ESCAPE[c] === 1 ? ESCAPE : s));
const UTF8 = new TextEncoder();
const ASCII = new TextDecoder();

function charLayer(text: string): Layer {
  const n = text.length;
  const codes = new Uint8Array(n);
  const start = new Int32Array(n);
  const end = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    codes[i] = Math.min(text.charCodeAt(i), 0x80);
    start[i] = i;
    end[i] = i + 1;
  }
  return { codes, start, end, produced: null };
}

function rawSkeleton({ codes }: Layer): Skeleton {
  const n = codes.length;
  const sk = new Uint8Array(n);
  const from = new Int32Array(n);
  const to = new Int32Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (SKELETAL[codes[i]!] === 0) continue;
    sk[m] = SKELETAL[codes[i]!]!;
    from[m] = i;
    to[m++] = i + 1;
  }
  return {
    text: ASCII.decode(sk.subarray(0, m)),
    from: from.subarray(0, m),
    to: to.subarray(0, m),
  };
}

/** One decoding pass, with the skeleton of its output; `again` when it produced a new escape's start. */
function decodePass({ codes, start, end, produced }: Layer): {
  next: Layer;
  skeleton: Skeleton;
  again: boolean;
} {
  const n = codes.length;
  /** Whether an escape this pass decoded makes another: then another pass is needed. */
  let again = false;
  const out = new Uint8Array(n);
  const outProduced = new Uint8Array(n);
  const outStart = new Int32Array(n);
  const outEnd = new Int32Array(n);
  const sk = new Uint8Array(n);
  const from = new Int32Array(n);
  const to = new Int32Array(n);
  let k = 0;
  let m = 0;
  for (let i = 0; i < n; ) {
    const eligible = STARTS_ESCAPE[codes[i]!] === 1 && (produced === null || produced[i] === 1);
    const got = eligible ? decodeAt(codes, i) : NONE;
    const c = got === NONE ? codes[i]! : got & 0xff;
    const len = got === NONE ? 1 : got >>> 8;
    if (got !== NONE && STARTS_ESCAPE[c] === 1) {
      outProduced[k] = 1;
      again = true;
    }
    out[k] = c;
    outStart[k] = start[i]!;
    outEnd[k] = end[i + len - 1]!;
    if (SKELETAL[c] !== 0) {
      sk[m] = SKELETAL[c]!;
      from[m] = outStart[k]!;
      to[m++] = outEnd[k]!;
    }
    k++;
    i += len;
  }
  return {
    next: {
      codes: out.subarray(0, k),
      start: outStart.subarray(0, k),
      end: outEnd.subarray(0, k),
      produced: outProduced.subarray(0, k),
    },
    skeleton: {
      text: ASCII.decode(sk.subarray(0, m)),
      from: from.subarray(0, m),
      to: to.subarray(0, m),
    },
    again,
  };
}
