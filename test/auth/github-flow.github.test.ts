// The whole sign-in through GitHub (the fake GitHub web and API): consent → GitHub → our
// callback → org/team groups → admitted by ALLOWED_GROUPS=acme/ops → tools/call.

import { beforeEach, describe, expect, it } from 'vitest';
import {
  Browser,
  connectSignedIn,
  REDIRECT,
  startAuthorization,
  TestOAuthClient,
} from '../support/worker/oauth';
import { fake } from '../support/idp-clients';
import { signInUpstream } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';

describe('sign-in through GitHub', () => {
  beforeEach(() => fake.reset());

  it('admits a member of acme/ops and calls tools as them', async () => {
    await fake.nextLogin({
      github: {
        id: 4242,
        login: 'Octo-Ops',
        orgs: ['acme'],
        teams: [{ org: 'acme', slug: 'ops' }],
      },
    });
    const { client } = await connectSignedIn('http', 'upstream');
    const listed = await call(client, 'pve_list_vms', { limit: 1 });
    expect(listed.isError, text(listed)).toBeFalsy();
    await client.close();
  });

  it('refuses a GitHub user who is not in acme/ops', async () => {
    const auth = new TestOAuthClient();
    const url = await startAuthorization('http', auth);
    await fake.nextLogin({ github: { id: 5151, login: 'outsider', orgs: [], teams: [] } });
    const result = await signInUpstream(new Browser(), url, REDIRECT);
    expect(result.status).toBe(403);
    expect(result.finalHtml).toMatch(/may not use this server/);
    expect(auth.tokens()).toBeUndefined();
  });
});
