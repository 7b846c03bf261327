// What the scrubber looks for, derived once per secret: the exact forms (searched in the text as
// it is) and skeleton needles (searched in the text's skeleton, see ./skeleton.ts) for the secret
// itself, for its base64 inside any longer base64 text, and for its hex.

/** Secrets shorter than this are not scrubbed: replacing "ab" everywhere would garble every text. */
export const MIN_SECRET_LENGTH = 6;
/**
 * A skeleton needle shorter than this is dropped: case and separators no longer count in the
 * skeleton, so a short one would match across ordinary words. A secret whose skeleton is
 * shorter is still caught in its exact forms.
 */
export const MIN_NEEDLE_LENGTH = 8;

export interface Needles {
  /** Searched as they are: the secret and its encodeURIComponent form. */
  exact: string[];
  /** Searched in skeletons: lower-case ASCII letters and digits only. */
  skeletal: string[];
}

export function needlesFor(secret: string): Needles {
  const bytes = new TextEncoder().encode(secret);
  const skeletal = [skeletonOf(secret), ...base64Cores(bytes).map(skeletonOf), hexOf(bytes)];
  return {
    exact: [...new Set([secret, encodeURIComponent(secret)])],
    skeletal: [...new Set(skeletal)].filter((s) => s.length >= MIN_NEEDLE_LENGTH),
  };
}

/**
 * The secret's base64 wherever it sits in a longer text (`user@pve!mcp:SECRET`, a whole
 * `PVEAPIToken=...` header). Base64 writes 3 bytes as 4 characters, so the secret lands at one of
 * 3 alignments; at each, the characters whose 6 bits all come from the secret are fixed whatever
 * surrounds it (the 1 or 2 at the edges also carry a neighbour's bits, at most 4 of the secret's
 * each, and are left out). Skeletons make the standard and URL-safe alphabets, padding and line
 * wrapping all the same.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const encoded = btoa(String.fromCharCode(...padded));
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    cores.push(encoded.slice(first, end));
  }
  return cores;
}

function hexOf(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The reduction ./skeleton.ts applies to texts (ASCII only), without decoding: a secret is taken literally. */
function skeletonOf(text: string): string {
  return text.replace(/[^A-Za-z0-9]/g, '').toLowerCase();
}
