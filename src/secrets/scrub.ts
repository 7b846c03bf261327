// One scrubber for text that may carry a configured secret back to us: Proxmox messages and
// `errors` maps, redirect locations, HTML from something in front of pveproxy, log lines, audit
// rows and tool results. Whatever echoes a secret (a misconfigured proxy, a PVE message quoting
// a header), it is replaced before anything is shown, logged or stored — and not only as it was
// configured: an echo may change its case, drop, change or insert separators (a UUID without
// hyphens, wrapped at a column), percent-, HTML- or JS-escape it, or carry it base64- or
// hex-encoded inside a longer text. Both sides are reduced to skeletons (./skeleton.ts), the
// secret's forms (./needles.ts) are searched there with indexOf, and each hit is replaced in the
// original text over the whole span it covers, and nothing around it.
// Cost, linear (no regex that can backtrack), measured with node 20 on the 2-core dev box
// (medians): deep() of a 64 KiB JSON tool result with no secret in it 0.47 ms, 2 KiB 17 µs
// (exact text only, as before: 0.11 ms and 5 µs); a hit about doubles it, for the spans.

import { MIN_SECRET_LENGTH, needlesFor } from './needles';
import { mappedSkeletonsOf, skeletonsOf } from './skeleton';

export const SCRUBBED = '[secret removed]';

/** Nested encodings undone ("%2541", "&amp;#97;"); a pass after the first runs only when needed. */
const DECODE_PASSES = 3;

export interface Scrubber {
  text(value: string): string;
  /** A copy of a JSON-like value with every string scrubbed (the same value when nothing matched). */
  deep<T>(value: T): T;
}

/** Built once per set of secrets (about 22 µs each): every call and Proxmox client asks for one. */
const built = new Map<string, Scrubber>();
const MAX_BUILT = 8;

export function scrubberFor(secrets: readonly (string | undefined)[]): Scrubber {
  const list = [
    ...new Set(secrets.map((s) => s?.trim() ?? '').filter((s) => s.length >= MIN_SECRET_LENGTH)),
  ];
  const key = JSON.stringify(list);
  let scrubber = built.get(key);
  if (!scrubber) {
    if (built.size >= MAX_BUILT) built.clear();
    scrubber = build(list);
    built.set(key, scrubber);
  }
  return scrubber;
}

/**
 * A scrubber for the values a call's redaction hid (a `sensitive` argument's value must not come
 * back in its own result either), each replaced by `replacement` (the audit trail's marker), in
 * every form the configured secrets are searched in. Not kept: each call has its own values.
 */
export function hiddenValuesScrubber(hidden: readonly string[], replacement: string): Scrubber {
  return build(
    [...new Set(hidden.map((s) => s.trim()).filter((s) => s.length >= MIN_SECRET_LENGTH))],
    replacement,
  );
}

/** `first`, then `second`, over the same text. */
export function chainScrubbers(first: Scrubber, second: Scrubber): Scrubber {
  return {
    text: (value) => second.text(first.text(value)),
    deep: (value) => second.deep(first.deep(value)),
  };
}

function build(list: readonly string[], replacement = SCRUBBED): Scrubber {
  const needles = list.map(needlesFor);
  const exact = [...new Set(needles.flatMap((n) => n.exact))];
  const skeletal = [...new Set(needles.flatMap((n) => n.skeletal))];
  // Every skeleton character comes from at least one character of the text.
  const shortest = Math.min(...exact.map((s) => s.length), ...skeletal.map((s) => s.length));
  const holds = (value: string): boolean =>
    value.length >= shortest &&
    (exact.some((form) => value.includes(form)) ||
      skeletonsOf(value, DECODE_PASSES).some((sk) => skeletal.some((n) => sk.includes(n))));
  const text = (value: string): string => {
    if (list.length === 0 || !holds(value)) return value;
    return replaceSpans(value, spansOf(value, exact, skeletal), replacement);
  };
  const deep = <T>(value: T): T => {
    if (list.length === 0) return value;
    // Cheap test first: most values carry no secret at all. One search of all the strings the
    // walk would scrub, keys too, joined by line breaks: no escape reads across one, so each
    // string's skeletons are in the joined text's and nothing the walk would find is missed; a
    // hit across two strings only costs the walk.
    if (!holds(stringsOf(value, []).join('\n'))) return value;
    const walked = walk(value, text);
    // A secret split between two strings (a task log's lines, a key and its value) is in neither
    // alone: find it in the strings joined, and remove each string's part of it.
    const strings = stringsOf(walked, []);
    const joined = strings.join('\n');
    if (!holds(joined)) return walked as T;
    const parts = partsOf(strings, spansOf(joined, exact, skeletal));
    let i = 0;
    return walk(walked, (s) => {
      const spans = parts.get(i++);
      return spans ? replaceSpans(s, spans, replacement) : s;
    }) as T;
  };
  return { text, deep };
}

/** [start, end) pairs, flat, of every hit in `text`, overlapping ones included. */
function spansOf(text: string, exact: string[], skeletal: string[]): number[] {
  const spans: number[] = [];
  for (const form of exact) {
    for (let i = text.indexOf(form); i >= 0; i = text.indexOf(form, i + 1))
      spans.push(i, i + form.length);
  }
  for (const { text: skeleton, from, to } of mappedSkeletonsOf(text, DECODE_PASSES)) {
    for (const needle of skeletal) {
      for (let i = skeleton.indexOf(needle); i >= 0; i = skeleton.indexOf(needle, i + 1)) {
        spans.push(from[i]!, to[i + needle.length - 1]!);
      }
    }
  }
  return spans;
}

/** `text` with each span, overlapping ones merged, replaced by `replacement`. */
function replaceSpans(text: string, flat: number[], replacement: string): string {
  if (flat.length === 0) return text;
  const spans: [number, number][] = [];
  for (let i = 0; i < flat.length; i += 2) spans.push([flat[i]!, flat[i + 1]!]);
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = '';
  let at = 0;
  for (const [start, end] of spans) {
    if (end <= at) continue;
    if (start >= at) out += text.slice(at, start) + replacement;
    // else: overlaps the span just replaced, which now reaches to `end`.
    at = end;
  }
  return out + text.slice(at);
}

/**
 * Spans over the strings joined by line breaks, as spans within each string they cross (by the
 * string's position in `strings`).
 */
function partsOf(strings: readonly string[], flat: number[]): Map<number, number[]> {
  const parts = new Map<number, number[]>();
  for (let k = 0; k < flat.length; k += 2) {
    const [start, end] = [flat[k]!, flat[k + 1]!];
    let offset = 0;
    for (const [i, s] of strings.entries()) {
      const from = Math.max(start, offset) - offset;
      const to = Math.min(end, offset + s.length) - offset;
      if (from < to) parts.set(i, [...(parts.get(i) ?? []), from, to]);
      offset += s.length + 1;
      if (offset >= end) break;
    }
  }
  return parts;
}

/** The strings `walk` scrubs, in order. */
function stringsOf(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out);
    }
  }
  return out;
}

function walk(value: unknown, text: (s: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, text));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), walk(v, text)]));
  }
  return value;
}
