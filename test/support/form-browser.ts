// A minimal browser for tests: keeps cookies, never follows redirects by itself, submits our
// consent and dev sign-in forms. Parameterised by fetch, so it runs in workerd (the Worker's own
// fetch) and in Node (real HTTP to `wrangler dev`).

import { chunkedBody } from './chunked-body';

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export class FormBrowser {
  private jar = new Map<string, string>();

  constructor(private readonly fetchFn: Fetch) {}

  get(url: string): Promise<Response> {
    return this.send(url, { method: 'GET' });
  }

  /** A form post; a field given as a list is sent once per value (ticked checkboxes). */
  post(url: string, form: Record<string, string | readonly string[]>): Promise<Response> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form))
      for (const v of typeof value === 'string' ? [value] : value) body.append(name, v);
    return this.send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
  }

  /** A JSON request (the policy API), with the cookies kept so far and any headers given. */
  json(
    url: string,
    method: 'GET' | 'POST',
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return this.send(url, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** The same form sent as a stream, without Content-Length (a chunked upload). */
  postChunked(url: string, form: Record<string, string>): Promise<Response> {
    return this.send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: chunkedBody(new URLSearchParams(form).toString()),
      duplex: 'half',
    } as RequestInit);
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size) headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await this.fetchFn(url, { ...init, headers, redirect: 'manual' });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair, ...attrs] = cookie.split(';');
      const [name, ...value] = (pair ?? '').split('=');
      const expired = attrs.some(
        (a) => /max-age=0\b/i.test(a.trim()) || /expires=thu, 01 jan 1970/i.test(a.trim()),
      );
      if (expired) this.jar.delete((name ?? '').trim());
      else this.jar.set((name ?? '').trim(), value.join('='));
    }
    return res;
  }
}

export interface Login {
  user: string;
  groups?: string;
  decision?: 'approve' | 'deny';
  /** The scopes to tick on the consent page; by default what the page ticks itself. */
  scopes?: readonly string[];
}

/** The scope boxes the consent page ticks itself, as a browser would submit them. */
export function tickedScopes(consentHtml: string): string[] {
  return scopeBoxes(consentHtml)
    .filter((b) => b.checked)
    .map((b) => b.value);
}

/** Every scope box on a consent page, whatever the order of its attributes. */
export function scopeBoxes(consentHtml: string): { value: string; checked: boolean }[] {
  return [...consentHtml.matchAll(/<input\b[^>]*>/g)]
    .map((m) => m[0])
    .filter((tag) => /\btype="checkbox"/.test(tag) && /\bname="scope"/.test(tag))
    .map((tag) => ({
      value: /\bvalue="([^"]*)"/.exec(tag)?.[1] ?? '',
      checked: /\schecked\b/.test(tag),
    }));
}

export interface LoginResult {
  /** Where the flow ended: the client's redirect URI (with code or error), or null on our page. */
  location: string | null;
  status: number;
  consentHtml: string;
  finalHtml: string | null;
}

/** Consent, then the dev sign-in; returns where the browser was finally sent. */
export async function signInWithDevIdp(
  browser: FormBrowser,
  authorizationUrl: string,
  login: Login,
): Promise<LoginResult> {
  const origin = new URL(authorizationUrl).origin;
  const consent = await browser.get(authorizationUrl);
  const consentHtml = await consent.text();
  if (consent.status !== 200)
    throw new Error(`consent page: ${consent.status} ${consentHtml.slice(0, 300)}`);
  const handle = /name="handle" value="([^"]+)"/.exec(consentHtml)?.[1];
  if (!handle) throw new Error('no consent handle on the page');
  const decided = await browser.post(`${origin}/authorize`, {
    handle,
    decision: login.decision ?? 'approve',
    scope: login.scopes ?? tickedScopes(consentHtml),
  });
  const next = decided.headers.get('location');
  if (decided.status !== 302 || !next) throw new Error(`consent post: ${decided.status}`);
  if (login.decision === 'deny')
    return { location: next, status: decided.status, consentHtml, finalHtml: null };
  const loginPage = await browser.get(new URL(next, origin).toString());
  const loginHtml = await loginPage.text();
  const state = /name="state" value="([^"]+)"/.exec(loginHtml)?.[1];
  if (!state) throw new Error(`no state on the login page: ${loginHtml.slice(0, 300)}`);
  const params = new URLSearchParams({ state, user: login.user, groups: login.groups ?? '' });
  const done = await browser.get(`${origin}/oauth/callback?${params}`);
  return {
    location: done.headers.get('location'),
    status: done.status,
    consentHtml,
    finalHtml: done.status === 302 ? null : await done.text(),
  };
}

/**
 * Consent, then follow redirects through an upstream identity provider that answers at once (the
 * fake IdP) until the browser is sent to `clientRedirect`, or lands on one of our pages.
 */
export async function signInUpstream(
  browser: FormBrowser,
  authorizationUrl: string,
  clientRedirect: string,
  /** The scopes to tick on the consent page; the ones it ticks itself when not given. */
  scopes?: readonly string[],
): Promise<LoginResult> {
  const origin = new URL(authorizationUrl).origin;
  const consent = await browser.get(authorizationUrl);
  const consentHtml = await consent.text();
  const handle = /name="handle" value="([^"]+)"/.exec(consentHtml)?.[1];
  if (!handle)
    throw new Error(
      `no consent handle on the page: ${consent.status} ${consentHtml.slice(0, 300)}`,
    );
  let res = await browser.post(`${origin}/authorize`, {
    handle,
    decision: 'approve',
    scope: scopes ?? tickedScopes(consentHtml),
  });
  for (let hops = 0; hops < 10; hops++) {
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) {
      return { location: null, status: res.status, consentHtml, finalHtml: await res.text() };
    }
    const next = new URL(location, origin).toString();
    if (next.startsWith(clientRedirect))
      return { location: next, status: res.status, consentHtml, finalHtml: null };
    await res.body?.cancel();
    res = await browser.get(next);
  }
  throw new Error('too many redirects');
}

/**
 * Opens one of our web pages (admin, approval) as `user`, signing in through the dev identity
 * provider when the page asks for it. Returns the page's HTML and status.
 */
export async function openAsDevUser(
  browser: FormBrowser,
  url: string,
  user: string,
  groups = '',
): Promise<{ status: number; html: string }> {
  const origin = new URL(url).origin;
  let res = await browser.get(url);
  for (let hops = 0; hops < 8 && res.status >= 300 && res.status < 400; hops++) {
    const next = new URL(res.headers.get('location')!, origin);
    await res.body?.cancel();
    if (next.pathname === '/dev-idp/login') {
      const state = next.searchParams.get('state')!;
      res = await browser.get(
        `${origin}/oauth/callback?${new URLSearchParams({ state, user, groups })}`,
      );
    } else {
      res = await browser.get(next.toString());
    }
  }
  return { status: res.status, html: await res.text() };
}

/** The CSRF token of the first form on a page. */
export function csrfOf(html: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no csrf token on the page: ${html.slice(0, 300)}`);
  return token;
}

/**
 * A replay of `policy` over the calls recorded since `since`, asked on the policy console (at
 * `origin`) by `user` as a person does it, with the page's form: the page that answers, as HTML.
 */
export async function replayInConsole(
  browser: FormBrowser,
  origin: string,
  { user, groups }: { user: string; groups: string },
  policy: object,
  since: number,
): Promise<string> {
  const page = await openAsDevUser(browser, `${origin}/admin/policy`, user, groups);
  const res = await browser.post(`${origin}/admin/policy/draft`, {
    csrf: csrfOf(page.html),
    action: 'replay',
    policy: JSON.stringify(policy),
    comment: '',
    since: new Date(since).toISOString(),
    limit: '1000',
  });
  return res.text();
}

/**
 * A person's yes on the approval page of approval `id` (at `origin`), signed in with the
 * development sign-in as `user`: the status of the answer (303 when taken).
 */
export async function approveAsDevUser(
  browser: FormBrowser,
  origin: string,
  id: string,
  { user, groups }: { user: string; groups: string },
): Promise<number> {
  const url = `${origin}/approvals/${id}`;
  const page = await openAsDevUser(browser, url, user, groups);
  const answered = await browser.post(url, { csrf: csrfOf(page.html), decision: 'approve' });
  await answered.body?.cancel();
  return answered.status;
}
