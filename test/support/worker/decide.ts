// A person deciding an approval on its page, as the approvals tests do it: open it (signing in
// with the dev identity provider), post the decision with the page's CSRF token, follow the
// redirect. Answers the status of the post (or of the page, when it offers no form) and the HTML.

import { Browser } from './oauth';
import { csrfOf, openAsDevUser } from '../form-browser';

export async function decide(
  id: string,
  user: string,
  decision: 'approve' | 'deny',
  groups = 'ops',
): Promise<{ status: number; html: string }> {
  const browser = new Browser();
  const opened = await openAsDevUser(browser, `http://localhost/approvals/${id}`, user, groups);
  if (opened.status !== 200) return { status: opened.status, html: opened.html };
  if (!/name="csrf"/.test(opened.html)) return { status: 200, html: opened.html };
  const res = await browser.post(`http://localhost/approvals/${id}`, {
    csrf: csrfOf(opened.html),
    decision,
  });
  const html =
    res.status === 303
      ? await browser
          .get(new URL(res.headers.get('location')!, 'http://localhost').toString())
          .then((r) => r.text())
      : await res.text();
  return { status: res.status, html };
}

/**
 * A decision posted by hand to approval `id`, whose page offers this person no form (the asker,
 * someone who approved already): with the session's CSRF token read off the page of `csrfFrom`,
 * an approval this person may decide, as someone crafting the post would. The decision route
 * must refuse it by itself. Answers the post's status and page.
 */
export async function postDecision(
  id: string,
  user: string,
  decision: 'approve' | 'deny',
  groups: string,
  csrfFrom: string,
): Promise<{ status: number; html: string }> {
  const browser = new Browser();
  const own = await openAsDevUser(browser, `http://localhost/approvals/${id}`, user, groups);
  if (/name="csrf"/.test(own.html)) throw new Error(`the page of ${id} offers ${user} a form`);
  const other = await browser.get(`http://localhost/approvals/${csrfFrom}`);
  const otherHtml = await other.text();
  if (!/name="csrf"/.test(otherHtml)) throw new Error(`the page of ${csrfFrom} offers no form`);
  const res = await browser.post(`http://localhost/approvals/${id}`, {
    csrf: csrfOf(otherHtml),
    decision,
  });
  return { status: res.status, html: await res.text() };
}
