// One scrubber for text that may carry a configured secret back to us: Proxmox messages and
// `errors` maps, redirect locations, HTML from something in front of pveproxy, log lines, audit
// rows and tool results. Whatever echoes a secret (a misconfigured proxy, a PVE message quoting
// a header), it is replaced before anything is shown, logged or stored.

export const SCRUBBED = '[secret removed]';

/** Secrets shorter than this are not scrubbed: replacing "ab" everywhere would garble every text. */
const MIN_SECRET_LENGTH = 6;

export interface Scrubber {
  text(value: string): string;
  /** A copy of a JSON-like value with every string scrubbed (the same value when nothing matched). */
  deep<T>(value: T): T;
}

export function scrubberFor(secrets: readonly (string | undefined)[]): Scrubber {
  const list = [...new Set(secrets.map((s) => s?.trim() ?? '').filter((s) => s.length >= MIN_SECRET_LENGTH))]
    // Longest first, so a secret that contains another is removed whole.
    .sort((a, b) => b.length - a.length);
  const variants = list.flatMap((s) => [...new Set([s, encodeURIComponent(s)])]);
  const text = (value: string): string => {
    let out = value;
    for (const secret of variants) if (out.includes(secret)) out = out.split(secret).join(SCRUBBED);
    return out;
  };
  const deep = <T>(value: T): T => {
    if (variants.length === 0) return value;
    // Cheap test first: most values carry no secret at all.
    const json = JSON.stringify(value);
    if (json === undefined || !variants.some((s) => json.includes(JSON.stringify(s).slice(1, -1)))) return value;
    return walk(value, text) as T;
  };
  return { text, deep };
}

function walk(value: unknown, text: (s: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, text));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), walk(v, text)]));
  }
  return value;
}
