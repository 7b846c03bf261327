// Server-rendered pages of the sign-in flow: plain HTML forms that work without JavaScript.
// Every interpolated value goes through hono/html's escaping; most of it (client name, redirect
// URI) was chosen by whoever registered the client, so it is attacker-controlled.

import type { ConsentDescription } from '@cloudflare/workers-oauth-provider';
import { POLICY_EDIT_SCOPE } from './bearer';
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem;line-height:1.3}
.box{border:1px solid #ccc;border-radius:8px;padding:1rem;margin:1rem 0;background:#fafafa}
.warn{border-color:#c77700;background:#fff7e6}
code,.uri{font-family:ui-monospace,monospace}
.uri{word-break:break-all}
td code{overflow-wrap:anywhere}
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

export interface ToolSummary {
  title: string;
  readOnly: boolean;
}

export function consentPage(
  details: ConsentDescription,
  handle: string,
  tools: ToolSummary[],
  serverName: string,
): Html {
  const origin = details.clientDomain
    ? html`<p>Published by <strong>${details.clientDomain}</strong>.</p>`
    : html`<p>This app registered itself; its name is not verified.</p>`;
  const loopback = details.redirectIsLoopback
    ? html`<div class="box warn" role="note"><strong>Access will go to an app on your own computer.</strong> Continue only if you just started signing in from it: any local program could be listening.</div>`
    : '';
  const policyEdit = details.scope.includes(POLICY_EDIT_SCOPE)
    ? html`<div class="box warn" role="note"><strong>It also asks to change this server's policy</strong> (what every agent may do), if you are one of its policy editors. Allow it only for your own script or CI, never for an AI assistant.</div>`
    : '';
  const items = tools.length
    ? tools.map(
        (t) =>
          html`<li>${t.title}${t.readOnly ? ' (read only)' : " (changes Proxmox; each call is checked by the server's policy)"}</li>`,
      )
    : [html`<li>No tools: the server's policy currently allows none.</li>`];
  return layout(
    `Allow ${details.clientName}?`,
    html`<h1>Allow <span class="uri">${details.clientName}</span> to use ${serverName}?</h1>
${origin}
<div class="box">
<p>It will act as you, signed in on the next step, and be able to:</p>
<ul>${items}</ul>
<p>Access will be sent to <strong class="uri">${details.redirectHost}</strong><br><small class="uri">${details.redirectUri}</small></p>
${details.scope.length ? html`<p>Scopes: <code>${details.scope.join(' ')}</code></p>` : ''}
</div>
${policyEdit}
${loopback}
<form method="post" action="/authorize">
<input type="hidden" name="handle" value="${handle}">
<div class="actions">
<button class="primary" type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  );
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
