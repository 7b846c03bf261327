// Server-rendered pages of the sign-in flow: plain HTML forms that work without JavaScript.
// Every interpolated value goes through hono/html's escaping; most of it (client name, redirect
// URI) was chosen by whoever registered the client, so it is attacker-controlled.

import type { ConsentDescription } from '@cloudflare/workers-oauth-provider';
import { POLICY_EDIT_SCOPE, POLICY_READ_SCOPE } from '../core/scopes';
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { htmlResponse } from '../http/html';

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem;line-height:1.3}
.box{border:1px solid #ccc;border-radius:8px;padding:1rem;margin:1rem 0;background:#fafafa}
.warn{border-color:#c77700;background:#fff7e6}
code,.uri{font-family:ui-monospace,monospace}
.uri,td code{overflow-wrap:anywhere}
body.wide{max-width:72rem}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=text]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1rem}
button{font-size:1rem;padding:.6rem 1.2rem;border-radius:6px;border:1px solid #555;background:#fff;cursor:pointer}
button.primary{background:#0b57d0;border-color:#0b57d0;color:#fff}
ul{padding-left:1.2rem}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
nav a{margin-right:1rem}
fieldset{border:1px solid #ccc;border-radius:8px;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end}
fieldset label{margin:0;font-weight:600;font-size:.9rem}
fieldset input,fieldset select{display:block;padding:.35rem;font-size:.95rem}
pre{overflow-x:auto;background:#f4f4f4;padding:.75rem;border-radius:6px;font-size:.85rem}`;

/** A page under the shared sheet; `style` (a constant of ours, never input) adds a page's own rules. */
export function layout(title: string, body: Html, wide = false, style = ''): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title}</title>
<style>${raw(STYLE + style)}</style>
</head>
<body${wide ? html` class="wide"` : ''}>
<main>${body}</main>
</body>
</html>`;
}

/** One scope as the consent page offers it, with what the policy in force lets through in it. */
export interface ScopeOffer {
  scope: string;
  label: string;
  allows: string;
  /** Ticked when the page opens. */
  ticked: boolean;
  /** The client asked for it. */
  asked: boolean;
  /** Its tools the policy lets through (each call still judged), and whether a person must approve. */
  tools: { title: string; approval: boolean }[];
  /** How many of its tools the policy refuses outright. */
  refused: number;
  /** A warning shown beside it (what it can reach). */
  warn?: string;
}

/** The consent page's own rules: the buttons stay in view however long the list is. */
const CONSENT_STYLE = `
html{scroll-padding-bottom:5rem}
.scope{border:1px solid #ccc;border-radius:8px;padding:.5rem .75rem;margin:.5rem 0}
.scope label{display:flex;gap:.5rem;align-items:baseline;margin:0}
.scope p{margin:.2rem 0 .2rem 1.6rem;font-size:.92rem}
.scope details{margin-left:1.6rem;font-size:.88rem}
.scope.warn{border-color:#c77700;background:#fff7e6}
.asked{color:#8a4b00}
form .actions{position:sticky;bottom:0;background:#fff;padding:.75rem 0;margin-top:.5rem;border-top:1px solid #ddd}`;

export function consentPage(
  details: ConsentDescription,
  handle: string,
  scopes: ScopeOffer[],
  serverName: string,
  policyUnreadable = false,
): Html {
  const origin = details.clientDomain
    ? html`<p>Published by <strong>${details.clientDomain}</strong>.</p>`
    : html`<p>This app registered itself; its name is not verified.</p>`;
  const loopback = details.redirectIsLoopback
    ? html`<div class="box warn" role="note"><strong>Access will go to an app on your own computer.</strong> Continue only if you just started signing in from it: any local program could be listening.</div>`
    : '';
  // The policy API's scopes, only when asked for, never ticked: for a person's own script or CI.
  const policyBox = (scope: string, what: string, detail: string): Html | string =>
    details.scope.includes(scope)
      ? html`<div class="scope warn" role="note"><label><input type="checkbox" name="scope" value="${scope}"> <span><strong>${what}</strong> <code>${scope}</code></span></label><p>${detail} Tick it only for your own script or CI, never for an AI assistant.</p></div>`
      : '';
  const policyEdit = html`${policyBox(POLICY_EDIT_SCOPE, "Change this server's policy", 'What every agent may do, if you are one of its policy editors.')}${policyBox(POLICY_READ_SCOPE, "Read this server's policy and replay drafts", 'Its versions, and how a draft would have decided the calls you may see, if you are an administrator or a policy editor.')}`;
  const policyNote = policyUnreadable
    ? html`<p class="box warn" role="note">The server's policy cannot be read right now: every call is refused until it is fixed.</p>`
    : '';
  return layout(
    `Allow ${details.clientName}?`,
    html`<h1>Allow <span class="uri">${details.clientName}</span> to use ${serverName}?</h1>
${origin}
<p>Access will be sent to <strong class="uri">${details.redirectHost}</strong><br><small class="uri">${details.redirectUri}</small></p>
${loopback}
${policyNote}
<form method="post" action="/authorize">
<input type="hidden" name="handle" value="${handle}">
<p>It will act as you, signed in on the next step. Tick what it may do; the server's policy still decides each call.</p>
${scopes.map(scopeBox)}
${policyEdit}
<p><small>With nothing ticked, Allow is the same as Deny.</small></p>
<div class="actions">
<button class="primary" type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
    false,
    CONSENT_STYLE,
  );
}

function scopeBox(s: ScopeOffer): Html {
  const approvals = s.tools.filter((t) => t.approval).length;
  const summary = s.tools.length
    ? `${s.tools.length} tool${s.tools.length === 1 ? '' : 's'} the policy allows${approvals ? `, ${approvals} only with a person's approval` : ''}${s.refused ? `; ${s.refused} refused` : ''}`
    : 'The policy allows none of its tools now';
  const list = s.tools.length
    ? html`<details><summary>${summary}</summary><ul>${s.tools.map((t) => html`<li>${t.title}${t.approval ? " (a person's approval each time)" : ''}</li>`)}</ul></details>`
    : html`<p><small>${summary}.</small></p>`;
  return html`<div class="scope${s.warn ? ' warn' : ''}">
<label><input type="checkbox" name="scope" value="${s.scope}"${s.ticked ? ' checked' : ''}> <span><strong>${s.label}</strong> <code>${s.scope}</code>${s.asked && !s.ticked ? html` <small class="asked">(the app asks for it)</small>` : ''}</span></label>
<p>${s.allows}${s.warn ? html` <strong>${s.warn}</strong>` : ''}</p>
${list}
</div>`;
}

export function devLoginPage(state: string, callbackPath: string, problem?: string): Html {
  return layout(
    'Sign in (local development)',
    html`<h1>Sign in (local development)</h1>
<div class="box warn" role="note">This sign-in page is for local development only: it believes whatever name you type.</div>
${problem ? html`<p role="alert"><strong>${problem}</strong></p>` : ''}
<form method="get" action="${callbackPath}">
<input type="hidden" name="state" value="${state}">
<label for="user">User name</label>
<input type="text" id="user" name="user" required autocomplete="username" placeholder="alice@example.com">
<label for="groups">Groups (optional, comma-separated)</label>
<input type="text" id="groups" name="groups" placeholder="ops, admins">
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`,
  );
}

/** A page that ends the flow here (not allowed, expired, misconfigured), with its status. */
export function messagePage(title: string, message: string, detail?: string): Html {
  return layout(
    title,
    html`<h1>${title}</h1><p>${message}</p>${detail ? html`<p><small>${detail}</small></p>` : ''}`,
  );
}

/** A message page as the response: its status, and headers (a cookie) where given. */
export async function messageResponse(
  status: number,
  title: string,
  message: string,
  detail?: string,
  headers?: Headers,
): Promise<Response> {
  return htmlResponse(await messagePage(title, message, detail), status, headers);
}
