// Reading one escape in a text held as codes (ASCII, and 0x80 and up for anything else): a
// percent-escape, an HTML character reference or a JS/JSON backslash escape, decoded to the ASCII
// code it stands for (OTHER when that is not ASCII) with how many codes it took; ./skeleton.ts
// runs these over a whole text. Pure. Each read looks a bounded distance ahead, except over a run
// of backslashes, which it then consumes whole, so a pass over a text stays linear.

export const PERCENT = 0x25;
export const AMPERSAND = 0x26;
export const BACKSLASH = 0x5c;
/** What an escape of something other than an ASCII letter or digit decodes to. */
const OTHER = 0x20;
/** No escape here. */
export const NONE = -1;

/** The escape at `i` (a "%", "&" or "\\") as (codes consumed << 8) | the code it stands for; or NONE. */
export function decodeAt(codes: Uint8Array, i: number): number {
  const c = codes[i];
  return c === PERCENT
    ? percent(codes, i)
    : c === AMPERSAND
      ? reference(codes, i)
      : c === BACKSLASH
        ? backslashes(codes, i)
        : NONE;
}

/** Longer backslash runs are read in pieces (and then decode to a backslash, so another pass). */
const MAX_RUN = 1 << 20;
const decoded = (code: number, len: number): number => (len << 8) | (code < 0x80 ? code : OTHER);

/** %41, and JavaScript escape()'s %u0041. */
function percent(codes: Uint8Array, i: number): number {
  const v = hexValue(codes, i + 1, 2);
  if (v >= 0) return decoded(v, 3);
  if (codes[i + 1] !== 0x75 && codes[i + 1] !== 0x55) return NONE;
  const u = hexValue(codes, i + 2, 4);
  return u >= 0 ? decoded(u, 6) : NONE;
}

/** &#97; and &#x61; (the ";" optional, as browsers take them), and named ones such as &amp; &nbsp;. */
function reference(codes: Uint8Array, i: number): number {
  if (codes[i + 1] === 0x23) {
    const hex = codes[i + 2] === 0x78 || codes[i + 2] === 0x58;
    const first = i + (hex ? 3 : 2);
    let j = first;
    let v = 0;
    for (; j - first < 7; j++) {
      const d = hex ? hexDigit(codes[j]) : decDigit(codes[j]);
      if (d < 0) break;
      v = v * (hex ? 16 : 10) + d;
    }
    if (j === first) return NONE;
    return decoded(v, j - i + (codes[j] === 0x3b ? 1 : 0));
  }
  let j = i + 1;
  while (j - i <= 32 && isAlnum(codes[j])) j++;
  if (j - i < 3 || codes[j] !== 0x3b) return NONE;
  // No named reference stands for an ASCII letter or digit; these start another escape.
  const code = named(codes, i + 1, j, 'amp')
    ? AMPERSAND
    : named(codes, i + 1, j, 'percnt')
      ? PERCENT
      : named(codes, i + 1, j, 'bsol')
        ? BACKSLASH
        : OTHER;
  return decoded(code, j - i + 1);
}

function named(codes: Uint8Array, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false;
  for (let j = 0; j < name.length; j++) if (codes[from + j] !== name.charCodeAt(j)) return false;
  return true;
}

/** \u0061 \u{61} \x61 and one-letter escapes, after any run of backslashes (JSON inside JSON). */
function backslashes(codes: Uint8Array, i: number): number {
  let j = i + 1;
  while (codes[j] === BACKSLASH && j - i < MAX_RUN) j++;
  const x = codes[j];
  const run = j - i;
  // At the very end the run goes whole: read from each of its backslashes in turn, it would cost n².
  if (x === undefined) return decoded(OTHER, run);
  if (x === 0x75 && codes[j + 1] === 0x7b) {
    let e = j + 2;
    while (e - j < 10 && hexDigit(codes[e]) >= 0) e++;
    if (e > j + 2 && codes[e] === 0x7d)
      return decoded(hexValue(codes, j + 2, e - j - 2), run + e - j + 1);
  }
  const width = x === 0x75 ? 4 : x === 0x78 ? 2 : 0;
  if (width > 0) {
    const v = hexValue(codes, j + 1, width);
    // Not a valid escape: the backslashes go, the letter stays (as JavaScript reads "\q").
    return v >= 0 ? decoded(v, run + 1 + width) : decoded(OTHER, run);
  }
  return decoded(CONTROL.includes(x) ? OTHER : x, run + 1);
}

/** \n \r \t \b \f \v \0 stand for control characters, not for the letter or digit. */
const CONTROL = [0x6e, 0x72, 0x74, 0x62, 0x66, 0x76, 0x30];

/** The value of exactly `width` hex digits at `at`, or -1. */
function hexValue(codes: Uint8Array, at: number, width: number): number {
  let v = 0;
  for (let j = at; j < at + width; j++) {
    const d = hexDigit(codes[j]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

function hexDigit(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

function isAlnum(c: number | undefined): boolean {
  return (
    c !== undefined &&
    ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a))
  );
}

function decDigit(c: number | undefined): number {
  return c !== undefined && c >= 0x30 && c <= 0x39 ? c - 0x30 : -1;
}
