// The active policy on /admin, folded behind one line: where it comes from, whether it is valid,
// its fingerprint (SHA-256 of the text as given, first 12 hex digits: what `sha256sum` prints
// for the same text) and size. An invalid one opens on its errors. Small on purpose: a policy
// store with numbered versions will pass its own label (and more) here.

import { html } from 'hono/html';
import { sha256Hex } from '../encoding';

export interface PolicyPanel {
  /** Where the policy comes from, e.g. `POLICY variable`. */
  label: string;
  valid: boolean;
  /** The policy text as given. */
  text: string;
  errors: string[];
}

const FINGERPRINT_HEX = 12;

export async function policyPanel(p: PolicyPanel) {
  const bytes = new TextEncoder().encode(p.text).length;
  const sha = (await sha256Hex(p.text)).slice(0, FINGERPRINT_HEX);
  const shown = reindented(p.text);
  return html`<details class="policy" id="policy-text"${p.valid ? '' : html` open`}>
<summary><strong>${p.label}</strong> · ${p.valid ? 'valid' : html`<strong class="bad">invalid — every tool call is denied</strong>`} · <span title="SHA-256 of the text as given">sha256 <code>${sha}</code></span> · ${size(bytes)}</summary>
${p.errors.length ? html`<ul class="errors">${p.errors.map((e) => html`<li><code>${e}</code></li>`)}</ul>` : ''}
${shown === p.text ? '' : html`<p><small>Shown re-indented; the fingerprint and size are of the text as given.</small></p>`}
<pre>${shown}</pre>
</details>`;
}

/** JSON written on one line (a POLICY variable often is) is shown indented; anything else as is. */
function reindented(text: string): string {
  if (text.includes('\n')) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KiB`;
}
