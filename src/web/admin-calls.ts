// Recent calls on /admin: which guest each call was about (node and vmid, a clone's source and
// new id, a migration's target) and its arguments as compact `key=value` text. Only what the
// audit record holds is shown: values were redacted before they were stored, and stay so; a long
// value is cut here, its whole stored text kept in the title. On a narrow screen each row is a
// card (admin-style.ts), its cells labelled by data-label.

import { html } from 'hono/html';
import { cutString } from '../audit/canonical';
import type { StoredAuditRecord } from '../audit/record';
import { own } from '../core/own';

/** The arguments that name the guest a call is about, shown in their own column. */
const GUEST_ARGS = ['node', 'vmid', 'source_vmid', 'newid', 'target'] as const;
/** Characters of a value shown before it is cut (the cell stays a line or two). */
const MAX_SHOWN = 48;

export interface GuestView {
  node: string | null;
  /** The guest the call was about: its vmid argument, or the id a created guest was given. */
  vmid: string | null;
  /** Where a clone came from, the new guest's id, the node a guest moves or is cloned to. */
  from: string | null;
  newid: string | null;
  target: string | null;
}

export interface ArgView {
  key: string;
  /** The value as shown (cut when long); null when the record kept the name only. */
  value: string | null;
  /** The whole stored value, when `value` is cut. */
  full: string | null;
}

const text = (v: unknown): string | null =>
  v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

export function guestOf(r: Pick<StoredAuditRecord, 'args' | 'vmid'>): GuestView {
  return {
    node: text(own(r.args, 'node')),
    vmid: text(own(r.args, 'vmid')) ?? (r.vmid === null ? null : String(r.vmid)),
    from: text(own(r.args, 'source_vmid')),
    newid: text(own(r.args, 'newid')),
    target: text(own(r.args, 'target')),
  };
}

/** The call's other arguments, in the order they were given, with their (redacted) values. */
export function argsOf(r: Pick<StoredAuditRecord, 'args' | 'arg_keys'>): ArgView[] {
  const keys = [...new Set([...r.arg_keys, ...Object.keys(r.args)])];
  return keys
    .filter((k) => !(GUEST_ARGS as readonly string[]).includes(k))
    .map((key) => {
      const full = text(own(r.args, key));
      const value = full === null ? null : cutString(full, MAX_SHOWN);
      return { key, value, full: value !== full ? full : null };
    });
}

/** A time as the admin pages write it (UTC, to the second); empty for none. */
export const iso = (ms: number | null | undefined): string =>
  ms ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : '';

/** A path-like name (`/tools/x/action`, `tool/counter`) that may break after each slash only. */
export function slashBreaks(name: string) {
  return name.split('/').map((part, i) => (i === 0 ? html`${part}` : html`/<wbr>${part}`));
}

function guestCell(r: Pick<StoredAuditRecord, 'args' | 'vmid'>) {
  const g = guestOf(r);
  const main =
    g.node !== null || g.vmid !== null
      ? html`<span class="nowrap">${g.node ?? ''}${g.node !== null && g.vmid !== null ? ' / ' : ''}${g.vmid !== null ? html`<strong>${g.vmid}</strong>` : ''}</span>`
      : '';
  const extras = [
    g.from !== null ? html`<small class="nowrap">from ${g.from}</small>` : '',
    g.newid !== null ? html`<small class="nowrap">new ${g.newid}</small>` : '',
    g.target !== null ? html`<small class="nowrap">to ${g.target}</small>` : '',
  ].filter((e) => e !== '');
  return html`${main}${extras.map((e) => html` ${e}`)}`;
}

function argsCell(r: Pick<StoredAuditRecord, 'args' | 'arg_keys'>) {
  return argsOf(r).map(
    (a) =>
      html`<code${a.full !== null ? html` title="${a.full}"` : ''}>${a.key}${a.value !== null ? html`=${a.value}` : ''}</code> `,
  );
}

/** A call's guest and arguments in one cell (a pending approval's). */
export function callSummary(args: Record<string, unknown>) {
  return html`${guestCell({ args, vmid: null })} ${argsCell({ args, arg_keys: [] })}`;
}

function callRow(r: StoredAuditRecord) {
  return html`<tr>
<td data-label="Time" class="nowrap"><small>${iso(r.ts)}</small></td>
<td data-label="User" class="who">${r.user_email ?? r.user_id}${r.pve_token ? html`<br><small>in Proxmox: <code>${r.pve_token}</code></small>` : ''}</td>
<td data-label="Tool" class="tool"><code>${r.tool}</code></td>
<td data-label="Guest" class="guest">${guestCell(r)}</td>
<td data-label="Arguments" class="args">${argsCell(r)}</td>
<td data-label="Decision">${r.decision}${r.rule ? html`<br><small><code>${slashBreaks(r.rule)}</code></small>` : ''}</td>
<td data-label="Outcome">${r.outcome}${r.error_kind ? html` <small>${r.error_kind}</small>` : ''}<br><small class="nowrap">${r.upstream_status !== null ? `HTTP ${r.upstream_status} · ` : ''}${r.latency_ms} ms</small></td>
</tr>`;
}

export function callsTable(records: readonly StoredAuditRecord[]) {
  return html`<div class="scroll"><table class="calls cards"><thead><tr><th scope="col">Time (UTC)</th><th scope="col">User</th><th scope="col">Tool</th><th scope="col">Guest</th><th scope="col">Arguments</th><th scope="col">Decision</th><th scope="col">Outcome</th></tr></thead>
<tbody>${records.length ? records.map(callRow) : html`<tr><td colspan="7">No calls match.</td></tr>`}</tbody></table></div>`;
}
