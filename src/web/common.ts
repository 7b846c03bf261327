// What every web page shares: who is looking (a web session, or the one local person with
// AUTH_MODE=none; an administrator, on the admin pages), checking that a form post came from our
// own page, and safe HTML responses.

import type { Context } from 'hono';
import { publicOrigin, stillAdmitted } from '../auth/config';
import { messageResponse } from '../auth/pages';
import { readForm } from '../http/form';
import { htmlResponse } from '../http/html';
import { Refusal } from '../http/refusal';
import type { AppBindings } from '../compose/runtime';
import { ANONYMOUS, type Identity } from '../core/identity';
import { readSession } from '../auth/web-session';
import { isAdmin } from './admins';

type Ctx = Context<AppBindings>;

export interface Viewer {
  identity: Identity;
  csrf: string;
}

/** The person looking at the page; anyone else is sent to sign in, or refused. */
export async function viewer(c: Ctx): Promise<Viewer> {
  const { config, stores } = c.var.runtime;
  if (config.authMode === 'none') return { identity: ANONYMOUS, csrf: 'local' };
  const session = await readSession(stores.kv, c.req.raw);
  if (session && !stillAdmitted(config, session.identity)) {
    throw Refusal.page(
      403,
      'Not allowed',
      `${session.identity.email ?? session.identity.userId} is no longer allowed to use this server.`,
    );
  }
  if (session) return session;
  if (c.req.method === 'GET') {
    const url = new URL(c.req.url);
    throw Refusal.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`);
  }
  throw Refusal.page(
    401,
    'Sign in first',
    'Your session has ended. Open the page again to sign in.',
  );
}

/** The administrator looking at an admin page; anyone else is sent to sign in, or refused. */
export async function adminViewer(c: Ctx): Promise<Viewer> {
  const v = await viewer(c);
  if (!isAdmin(c.var.runtime.config, v.identity)) {
    throw Refusal.page(
      403,
      'Administrators only',
      `${v.identity.email ?? v.identity.userId} is not an administrator of this server (ADMIN_USERS / ADMIN_GROUPS).`,
    );
  }
  return v;
}

/** A form post must come from our own pages: same origin, and the session's CSRF token. */
export async function checkPost(c: Ctx, v: Viewer): Promise<Record<string, string>> {
  const origin = c.req.header('origin');
  if (origin && origin !== publicOrigin(c.var.runtime.config, c.req.raw))
    throw Refusal.page(403, 'Refused', 'This form was not sent from this site.');
  const data = await readForm(c.req.raw);
  if (!data)
    throw Refusal.page(400, 'Refused', 'This form could not be read. Send it from its page.');
  const form = Object.fromEntries([...data.entries()].map(([k, val]) => [k, String(val)]));
  if (form.csrf !== v.csrf)
    throw Refusal.page(
      403,
      'Refused',
      'This form is stale or was not sent from this site. Reload the page.',
    );
  return form;
}

export function page(status: number, title: string, message: string): Promise<Response> {
  return messageResponse(status, title, message);
}

export async function html(body: unknown, status = 200): Promise<Response> {
  return htmlResponse(String(await body), status);
}
