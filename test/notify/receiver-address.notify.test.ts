// Receiver addresses in workerd, whose URL parser the Worker uses: the numeric spellings of
// loopback and metadata addresses are read as the addresses they are, and /health names the
// receivers let onto a private network (`"private_network": true`) without failing for them.
// This project runs the development sign-in (IDP=dev), where loopback receivers are taken. /health
// gives its details to an administrator signed in on /admin (a web session), and to nobody for
// asking from loopback.

import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { configOf } from '../../src/config';
import type { AppEnv } from '../../src/env';
import worker from '../../src/index';
import { notifyTargets } from '../../src/notify/targets';
import { FormBrowser, openAsDevUser } from '../support/form-browser';
import { asEditor } from '../support/worker/oauth';
import { ORIGIN } from '../support/worker/mcp';
import { usePolicy } from '../support/worker/policy';
import { NOTIFY_POLICY } from '../support/policies/notify';

// The notification tests' policy, whose rules name some of the receivers.
usePolicy(NOTIFY_POLICY, asEditor());

/** A browser on a Worker with the settings `e`, each request in its own execution context. */
function browserOn(e: AppEnv): FormBrowser {
  return new FormBrowser(async (url, init) => {
    const ctx = createExecutionContext();
    const res = await worker.fetch(new Request(url, init), e, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  });
}

/** /health as ADMIN_USERS' member, signed in on /admin. */
async function operatorHealth(e: AppEnv): Promise<Response> {
  const browser = browserOn(e);
  const opened = await openAsDevUser(browser, `${ORIGIN}/admin`, 'admin@example.com', 'ops');
  expect(opened.status).toBe(200);
  return browser.get(`${ORIGIN}/health`);
}

describe('receiver addresses as workerd parses them', () => {
  it.each([
    ['http://2130706433/x', 'loopback'],
    ['http://0x7f.1/x', 'loopback'],
    ['http://017700000001/x', 'loopback'],
    ['http://[::ffff:127.0.0.1]/x', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]/x', 'loopback'],
    ['https://0251.0376.0251.0376/x', 'cloud metadata'],
    ['https://2852039166/x', 'cloud metadata'],
    ['https://[::ffff:a9fe:a9fe]/x', 'cloud metadata'],
  ])('%s is a %s address', (url, kind) => {
    const production: string[] = [];
    notifyTargets(JSON.stringify([{ url, private_network: true }]), production, {
      localDevelopment: false,
    });
    expect(production).toEqual([expect.stringContaining(`is a ${kind} address`)]);
    const development: string[] = [];
    const taken = notifyTargets(JSON.stringify([{ url }]), development, {
      localDevelopment: true,
    });
    expect(taken.length).toBe(kind === 'loopback' ? 1 : 0);
  });

  it("keeps this project's own loopback receivers (IDP=dev is local development)", () => {
    const { notify, problems } = configOf(env as unknown as AppEnv);
    expect(notify.targets.map((t) => t.name)).toEqual(['json', 'slack', 'teams', 'flaky', 'hang']);
    expect(problems.filter((p) => p.setting === 'notify')).toEqual([]);
  });
});

describe('/health and receivers on a private network', () => {
  it('names the receivers let onto a private network, as a notice that does not fail it', async () => {
    // This project's receivers (its policy names some of them), then two more.
    const own = JSON.parse((env as unknown as AppEnv).APPROVAL_WEBHOOKS!) as unknown[];
    const withPrivate: AppEnv = {
      ...(env as unknown as AppEnv),
      APPROVAL_WEBHOOKS: JSON.stringify([
        ...own,
        { name: 'lan-relay', url: 'https://10.20.0.5/hooks/approvals', private_network: true },
        { name: 'imds', url: 'https://169.254.169.254/latest/', private_network: true },
      ]),
    };
    // From loopback, without a session: the public view, which names no receiver.
    const anyone = await (await browserOn(withPrivate).get(`${ORIGIN}/health`)).json();
    expect(anyone).toMatchObject({ view: 'public' });
    expect(anyone).not.toHaveProperty('notices');
    // A member of ADMIN_USERS signed in, without an access token: the operator view.
    const res = await operatorHealth(withPrivate);
    const body = (await res.json()) as {
      ok: boolean;
      view: string;
      notifications?: { receivers: number };
      notices?: { check: string; message: string }[];
      problems?: { check: string; message: string }[];
    };
    expect(body.view).toBe('operator');
    expect(body.notifications?.receivers).toBe(own.length + 1);
    expect(body.notices).toEqual([
      { check: 'notify', message: expect.stringContaining('"lan-relay"') },
    ]);
    expect(body.notices![0]!.message).not.toMatch(/"(json|slack|teams|flaky|hang|imds)"/);
    // The URL's path can be the receiver's credential: never shown.
    expect(JSON.stringify(body)).not.toContain('/hooks/approvals');
    // A metadata address is refused even with the opt-in: that one is a problem, the only one.
    expect((body.problems ?? []).filter((p) => p.check === 'notify')).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          new RegExp(`^APPROVAL_WEBHOOKS\\[${own.length + 1}\\] is ignored: .*metadata`),
        ),
      }),
    ]);
    // The notice alone would not fail /health: the same list without the metadata receiver.
    const onlyPrivate = await operatorHealth({
      ...withPrivate,
      APPROVAL_WEBHOOKS: JSON.stringify([
        ...own,
        { name: 'lan-relay', url: 'https://10.20.0.5/hooks/approvals', private_network: true },
      ]),
    });
    const healthy = (await onlyPrivate.json()) as typeof body;
    expect(healthy.notices).toHaveLength(1);
    expect((healthy.problems ?? []).filter((p) => p.check === 'notify')).toEqual([]);
  });
});
