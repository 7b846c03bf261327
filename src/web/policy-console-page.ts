// The policy console's pages (/admin/policy, /admin/policy/version/N): the active version and its
// diff against the one it replaced, the shadow with its disagreements, the history, the changes,
// and a draft editor whose results (problems, replay) are shown on the same page. Plain
// server-rendered HTML under the page CSP (no scripts): a draft is checked on submit. Buttons
// that change anything are rendered for editors only (the routes check again).

import type { LocatedProblem } from '../policy/locate';
import { html } from 'hono/html';
import { layout } from '../auth/pages';
import type { ShadowDisagreement } from '../policy/shadow';
import type { PolicyOverview, PolicyVersion } from '../policy-store/types';
import { policyDiffHtml } from './policy-diff';
import type { ReplayAnswer } from './policy-ops';

type Html = ReturnType<typeof html>;

const iso = (ms: number | null | undefined): string =>
  ms ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : '';

export interface DraftState {
  text: string;
  comment: string;
  since: string;
  limit: string;
  /** What the check found, each where it is in the text when that is known. */
  problems?: LocatedProblem[];
  warnings?: string[];
  /** Set after a check that passed. */
  valid?: boolean;
  replay?: ReplayAnswer;
}

export interface ConsoleView {
  viewer: string;
  csrf: string;
  editor: boolean;
  overview: PolicyOverview;
  active: PolicyVersion | null;
  /** The version the active one replaced, for its diff. */
  previous: PolicyVersion | null;
  /** The newest disagreements the viewer may see, and how many there are of them. */
  disagreements: ShadowDisagreement[];
  shadowCount: number;
  /** `own`: the viewer is no administrator, and replays and the shadow show only their calls. */
  callsSeen: 'all' | 'own';
  draft: DraftState;
  notice?: string;
  error?: string;
}

const STYLE = html`<style>
.diff{font:13px/1.4 ui-monospace,monospace;white-space:pre-wrap;overflow-wrap:anywhere;border:1px solid #ddd;border-radius:6px;padding:.5rem;max-height:28rem;overflow:auto}
.diff ins{background:#e6ffec;text-decoration:none;display:block}
.diff del{background:#ffebe9;text-decoration:none;display:block}
textarea{width:100%;box-sizing:border-box;min-height:18rem;font:13px/1.4 ui-monospace,monospace}
.row{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end}
.row label{margin:.25rem 0}
.scroll{overflow-x:auto}
.tag{display:inline-block;padding:0 .4rem;border-radius:4px;background:#eef;font-size:.8rem}
.problems{color:#a40000}
section.panel{border-top:3px solid #0b57d0;margin-top:1.5rem}
section.panel>h2{margin-top:.5rem}
h1{font-size:1.6rem}
fieldset.activate{display:block;border:2px solid #b3261e;border-radius:8px;padding:.5rem .75rem;margin:1rem 0}
fieldset.activate legend{font-weight:600;color:#b3261e}
fieldset.activate label.confirm{display:block;font-weight:400;margin:.25rem 0 .5rem}
button.danger{background:#fff;border:2px solid #b3261e;color:#b3261e;font-weight:600}
.excerpt{margin:.25rem 0 .5rem;white-space:pre;overflow-x:auto}
.excerpt mark{background:#ffe08a}
.muted{color:#666}
form.inline{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;margin:.25rem 0}
form.inline input[type=text]{width:auto;flex:1 1 12rem}
</style>`;

/** A problem of the draft, with where it is: its line and the lines around it, numbered. */
function problemItem(p: LocatedProblem, text: string): Html {
  if (p.line === null) return html`<li><code>${p.text}</code></li>`;
  const lines = text.split(/\r?\n/);
  const from = Math.max(1, p.line - 1);
  const to = Math.min(lines.length, p.line + 1);
  const width = String(to).length;
  const excerpt = [];
  for (let n = from; n <= to; n++) {
    const numbered = `${String(n).padStart(width)} | ${lines[n - 1] ?? ''}`;
    excerpt.push(n === p.line ? html`<mark>${numbered}</mark>\n` : html`${numbered}\n`);
  }
  return html`<li>Line ${p.line}, column ${p.column}: <code>${p.text}</code><pre class="excerpt">${excerpt}</pre></li>`;
}

/** Two versions' diff (./policy-diff.ts: bounded; past the bound, both texts). */
function diffOf(before: PolicyVersion, after: PolicyVersion) {
  const named = (v: PolicyVersion) => ({ name: `version ${v.version}`, text: v.text });
  return policyDiffHtml(named(before), named(after));
}

function versionLine(v: PolicyOverview['versions'][number]): Html {
  return html`version ${v.version} · ${v.author} · ${iso(v.created)} · “${v.comment}” ·
<code title="SHA-256 ${v.sha256}">${v.sha256.slice(0, 12)}</code>`;
}

function commentField(id: string): Html {
  return html`<label for="${id}">Comment</label><input type="text" id="${id}" name="comment" required maxlength="500" placeholder="Why (goes into the history and the audit trail)">`;
}

/** A record's guest facts in a line: "pool: prod · tags: prod, web" (none: "none"). */
function factsInWords(facts: Record<string, unknown>): string {
  const value = (v: unknown) =>
    v === null || (Array.isArray(v) && v.length === 0)
      ? 'none'
      : Array.isArray(v)
        ? v.join(', ')
        : String(v);
  return Object.entries(facts)
    .map(([fact, v]) => `${fact}: ${value(v)}`)
    .join(' · ');
}

/** The cluster column's heading and cells, where some row names its cluster (several reached). */
function clusterColumn(rows: readonly { cluster?: string }[]): {
  head: Html | string;
  cell: (row: { cluster?: string }) => Html | string;
} {
  if (!rows.some((row) => row.cluster !== undefined)) return { head: '', cell: () => '' };
  return {
    head: html`<th scope="col">Cluster</th>`,
    cell: (row) => html`<td>${row.cluster ?? ''}</td>`,
  };
}

/** A cell of the facts a call was judged on, or that its record keeps none. */
function guestCell(facts: Record<string, unknown> | undefined): Html {
  return html`<td class="guest">${facts ? factsInWords(facts) : html`<small>not kept</small>`}</td>`;
}

function replayTable(r: ReplayAnswer): Html {
  const by = Object.entries(r.totals.by_change)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const rule = (x: string | null | undefined) =>
    x ? html`<br><small><code>${x}</code></small>` : '';
  const cluster = clusterColumn(r.changed);
  return html`<section aria-labelledby="replay-h"><h3 id="replay-h">Replay since ${iso(r.since)}</h3>
${r.note ? html`<p class="box" id="replay-note">${r.note}</p>` : ''}
<p id="replay-summary"><strong>${r.changed.length}</strong> of ${r.calls} recorded calls${r.calls_seen === 'own' ? ' of yours' : ''} would be decided otherwise${by ? ` (${by})` : ''}; ${r.totals.unchanged} unchanged, ${r.totals.skipped} skipped${r.truncated ? '; only the newest calls up to the limit were replayed' : ''}.</p>
${
  r.changed.length
    ? html`<div class="scroll"><table id="replay-changes"><thead><tr><th scope="col">Time</th><th scope="col">Person</th><th scope="col">Tool</th>${cluster.head}<th scope="col">Guest as judged</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">Request</th></tr></thead><tbody>
${r.changed.map(
  (
    c,
  ) => html`<tr><td>${iso(c.ts)}</td><td>${c.user}</td><td><code>${c.tool}</code></td>${cluster.cell(c)}
${guestCell(c.guest)}
<td>${c.before.decision}${rule(c.before.rule)}</td>
<td><strong>${c.after.decision}</strong>${rule(c.after.rule)}${c.after.unknown ? html`<br><small>depends on ${c.after.unknown}</small>` : ''}</td>
<td><small><code>${c.request_id}</code></small></td></tr>`,
)}</tbody></table></div>`
    : ''
}</section>`;
}

export function consolePage(v: ConsoleView) {
  const o = v.overview;
  const d = v.draft;
  const hidden = html`<input type="hidden" name="csrf" value="${v.csrf}">`;
  const active = o.active
    ? html`<p id="active-line"><span class="tag">active</span> ${versionLine(o.active)}</p>
<details><summary>Policy text of version ${o.active.version}</summary><pre class="diff">${v.active?.text ?? ''}</pre></details>
${
  v.previous && v.active
    ? html`<details open><summary>Changes from version ${v.previous.version}</summary>${diffOf(v.previous, v.active)}</details>`
    : ''
}`
    : html`<p class="problems">No version is stored: the deployed policy was refused.</p>`;
  const deploy = o.deployProblems
    ? html`<div class="box warn"><p>The deployed policy fails its checks and was not stored; the active version stays:</p><ul>${o.deployProblems.map((p) => html`<li><code>${p}</code></li>`)}</ul></div>`
    : '';
  const shadowCluster = clusterColumn(v.disagreements);
  const shadow = o.shadow
    ? html`<p id="shadow-line"><span class="tag">shadow</span> ${versionLine(o.shadow)} · since ${iso(o.shadow.since)} ·
<strong id="disagreements">${v.shadowCount}</strong> disagreement${v.shadowCount === 1 ? '' : 's'}${v.callsSeen === 'own' ? ' on your own calls' : ''}</p>
${
  v.disagreements.length
    ? html`<div class="scroll"><table><thead><tr><th scope="col">Time</th><th scope="col">Person</th><th scope="col">Tool</th>${shadowCluster.head}<th scope="col">Guest as judged</th><th scope="col">Active (v${o.active?.version ?? ''})</th><th scope="col">Shadow (v${o.shadow.version})</th></tr></thead><tbody>
${v.disagreements.map(
  (
    x,
  ) => html`<tr><td>${iso(x.ts)}</td><td>${x.user}</td><td><code>${x.tool}</code></td>${shadowCluster.cell(x)}
${guestCell(x.guest)}
<td>${x.active.decision}${x.active.rule ? html`<br><small><code>${x.active.rule}</code></small>` : ''}</td>
<td>${x.shadow.decision}${x.shadow.rule ? html`<br><small><code>${x.shadow.rule}</code></small>` : ''}</td></tr>`,
)}</tbody></table></div>`
    : ''
}
${
  v.editor
    ? html`<form method="post" action="/admin/policy/shadow/stop" class="inline">${hidden}<input type="hidden" name="base" value="${o.active?.version ?? 0}">${commentField('shadow-stop-comment')}<button type="submit">Stop the shadow</button></form>`
    : ''
}`
    : html`<p>No version runs in shadow.</p>`;
  const history = o.versions.map(
    (
      x,
    ) => html`<tr><td>${x.version}${o.active?.version === x.version ? html` <span class="tag">active</span>` : ''}${o.shadow?.version === x.version ? html` <span class="tag">shadow</span>` : ''}</td>
<td>${x.author}</td><td>${iso(x.created)}</td><td>${x.comment}</td><td>${x.replaces !== null ? `version ${x.replaces}` : html`<span class="muted">none (the first)</span>`}</td>
<td><a href="/admin/policy/version/${x.version}">view, diff${v.editor && o.active?.version !== x.version ? ', activate' : ''}</a></td></tr>`,
  );
  const events = o.events
    .slice(0, 20)
    .map(
      (e) =>
        html`<li>${iso(e.ts)} · ${e.actor} · ${e.action.replace('_', ' ')}${e.version !== null ? ` version ${e.version}` : ''}${e.forced ? html` <strong>(forced: the active version was not checked)</strong>` : ''} · “${e.comment}”</li>`,
    );
  const results = html`${
    d.problems?.length
      ? html`<div class="box warn" id="draft-problems"><p class="problems">The draft fails its checks (nothing was stored):</p><ul>${d.problems.map((p) => problemItem(p, d.text))}</ul></div>`
      : ''
  }${d.valid ? html`<p id="draft-valid">The draft is valid.${d.warnings?.length ? html` Warnings: ${d.warnings.join('; ')}` : ''}</p>` : ''}${
    d.valid && v.active
      ? html`<details open id="draft-changes"><summary>What activating it would change</summary>${policyDiffHtml({ name: `the active version ${v.active.version}`, text: v.active.text }, { name: 'the draft', text: d.text })}</details>`
      : ''
  }${d.replay ? replayTable(d.replay) : ''}`;
  return layout(
    'Proxmox MCP — policy',
    html`${STYLE}<p><a href="/admin">← Admin</a> · signed in as ${v.viewer}${v.editor ? ' (policy editor)' : ' (read only: not in POLICY_EDITORS)'}</p>
<h1>Policy console</h1>
${v.notice ? html`<p class="box" role="status" id="notice">${v.notice}</p>` : ''}
${v.error ? html`<p class="box warn" role="alert" id="error">${v.error}</p>` : ''}
${deploy}
<section aria-labelledby="active-h" class="panel"><h2 id="active-h">In force now</h2>${active}</section>
<section aria-labelledby="shadow-h" class="panel"><h2 id="shadow-h">Running in shadow</h2>${shadow}</section>
<section aria-labelledby="draft-h" class="panel"><h2 id="draft-h">Your draft</h2>
<form method="post" action="/admin/policy/draft">${hidden}<input type="hidden" name="base" value="${o.active?.version ?? 0}">
<label for="draft-text">Draft policy (JSON)</label>
<textarea id="draft-text" name="policy" spellcheck="false">${d.text}</textarea>
<div class="row">
<div><label for="draft-since">Replay calls since</label><input type="text" id="draft-since" name="since" value="${d.since}" size="8" placeholder="7d"></div>
<div><label for="draft-limit">at most (calls)</label><input type="text" id="draft-limit" name="limit" value="${d.limit}" size="6" inputmode="numeric"></div>
</div>
<div class="actions">
<button type="submit" name="action" value="check" class="primary" formnovalidate>Check</button>
<button type="submit" name="action" value="replay" formnovalidate>Replay</button>
</div>
${
  v.editor
    ? html`<label for="draft-comment">Comment (required to save)</label><input type="text" id="draft-comment" name="comment" value="${d.comment}" maxlength="500">
<div class="actions">
<button type="submit" name="action" value="save" formnovalidate>Save as a new version</button>
<button type="submit" name="action" value="shadow" formnovalidate>Save and run in shadow</button>
</div>
<fieldset class="activate" aria-labelledby="activate-legend"><legend id="activate-legend">Activate: every agent's calls are judged by it within 5 seconds</legend>
<label class="confirm"><input type="checkbox" name="confirm_activate" value="yes" required> ${o.active ? `Replace the active version ${o.active.version} with this draft for every agent` : 'Make this draft the policy for every agent'} (Check first: the changes from it are shown there)</label>
<button type="submit" name="action" value="activate" class="danger">Save and activate</button>
</fieldset>`
    : ''
}
</form>
${results}
</section>
<section aria-labelledby="history-h"><h2 id="history-h">History</h2>
<div class="scroll"><table id="history"><thead><tr><th scope="col">Version</th><th scope="col">Author</th><th scope="col">Created</th><th scope="col">Comment</th><th scope="col">Replaced, when made</th><th scope="col"></th></tr></thead>
<tbody>${history}</tbody></table></div></section>
<section aria-labelledby="events-h"><h2 id="events-h">Changes</h2><ul id="events">${events}</ul></section>`,
    true,
  );
}

export interface VersionView {
  viewer: string;
  csrf: string;
  editor: boolean;
  version: PolicyVersion;
  replaced: PolicyVersion | null;
  active: boolean;
  shadow: boolean;
  /** The version active when the page was made (the activate form's base). */
  activeVersion: number | null;
  /** The active version's text, to show what activating this one would change. */
  activeText: string | null;
}

export function versionPage(v: VersionView) {
  const x = v.version;
  const hidden = html`<input type="hidden" name="csrf" value="${v.csrf}">`;
  return layout(
    `Proxmox MCP — policy version ${x.version}`,
    html`${STYLE}<p><a href="/admin/policy">← Policy</a></p>
<h1>Version ${x.version}${v.active ? ' (active)' : ''}${v.shadow ? ' (in shadow)' : ''}</h1>
<p>${versionLine(x)}</p>
${
  v.editor && !v.active
    ? html`<form method="post" action="/admin/policy/version/${x.version}/activate" class="inline">${hidden}<input type="hidden" name="base" value="${v.activeVersion ?? 0}">${commentField('activate-comment')}<button type="submit" class="primary">Activate version ${x.version}</button></form>
${v.shadow ? '' : html`<form method="post" action="/admin/policy/version/${x.version}/shadow" class="inline">${hidden}<input type="hidden" name="base" value="${v.activeVersion ?? 0}">${commentField('shadow-comment')}<button type="submit">Run version ${x.version} in shadow</button></form>`}`
    : ''
}
${
  !v.active && v.activeText !== null
    ? html`<h2>What activating it would change (from active version ${v.activeVersion})</h2>${policyDiffHtml({ name: `the active version ${v.activeVersion}`, text: v.activeText }, { name: `version ${x.version}`, text: x.text })}`
    : ''
}
${
  v.replaced
    ? html`<h2>Changes from version ${v.replaced.version}, which it replaced</h2>${diffOf(v.replaced, x)}`
    : html`<p>The first version.</p>`
}
<h2>Text</h2><pre class="diff">${x.text}</pre>`,
    true,
  );
}
