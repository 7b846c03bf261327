// PVE_CLUSTERS: the clusters one server reaches, each its own way, checked once with the other
// settings. Each case is a configuration an operator writes; what matters is the clients built
// (URL, token, secrets, binding), and that a mistake is named with what to do, never with a
// secret's value.

import { describe, expect, it } from 'vitest';
import { configOf } from '../../src/config';
import type { AppEnv } from '../../src/env';
import { configProblems } from '../../src/health/config-checks';

const LAB_SECRET = '0b6e54d2-1111-4aaa-8bbb-labsecret000';
const PROD_SECRET = '7c1f9a33-2222-4ccc-8ddd-prodsecret00';
const ACCESS_SECRET = 'access-secret-value-5e2c';
/** As Cloudflare Access client secrets are: 64 hex digits. */
const HEX_SECRET = 'a3f1'.repeat(16);

/** A binding as the runtime gives it: something with fetch. */
const binding = (): Fetcher =>
  ({ fetch: async () => new Response('{}'), connect: () => undefined }) as unknown as Fetcher;

const LAB = {
  name: 'lab',
  base_url: 'https://pve-lab.example.com:8006',
  token_id: 'mcp@pve!lab',
  token_secret_var: 'LAB_TOKEN_SECRET',
  access_client_id: 'lab.access',
  access_secret_var: 'LAB_ACCESS_SECRET',
};
const PROD = {
  name: 'prod',
  vpc_service: 'PVE_PROD',
  token_id: 'mcp@pve!prod',
  token_secret_var: 'PROD_TOKEN_SECRET',
  timeout_ms: 30_000,
};

function env(vars: Record<string, unknown>): AppEnv {
  return { AUTH_MODE: 'oauth', ...vars } as unknown as AppEnv;
}

const twoClusters = (extra: Record<string, unknown> = {}, clusters: unknown = [LAB, PROD]) =>
  env({
    PVE_CLUSTERS: JSON.stringify(clusters),
    LAB_TOKEN_SECRET: LAB_SECRET,
    LAB_ACCESS_SECRET: ACCESS_SECRET,
    PROD_TOKEN_SECRET: PROD_SECRET,
    PVE_PROD: binding(),
    ...extra,
  });

/** The configuration's error about clusters (failing the test if there is none). */
function clusterError(e: AppEnv): string {
  const { clusters, pve } = configOf(e);
  if (!('error' in clusters)) throw new Error('expected an error');
  expect(pve).toEqual(clusters);
  for (const secret of [LAB_SECRET, PROD_SECRET, ACCESS_SECRET, HEX_SECRET])
    expect(clusters.error.toLowerCase()).not.toContain(secret);
  return clusters.error;
}

describe('PVE_CLUSTERS', () => {
  it('builds one client per cluster, each with its own URL, token, secrets, binding and deadline; the first is the default', () => {
    const e = twoClusters({ PVE_TIMEOUT_MS: '20000' });
    const config = configOf(e);
    if ('error' in config.clusters) throw new Error(config.clusters.error);
    expect(config.clusters.listed).toBe(true);
    const [lab, prod] = config.clusters.all;
    expect(lab).toEqual({
      name: 'lab',
      vpcService: null,
      client: {
        baseUrl: 'https://pve-lab.example.com:8006/api2/json',
        tokenId: 'mcp@pve!lab',
        tokenSecret: LAB_SECRET,
        accessClientId: 'lab.access',
        accessClientSecret: ACCESS_SECRET,
        binding: undefined,
        timeoutMs: 20_000,
        // Its messages name its own settings, never the single-cluster ones.
        names: {
          baseUrl: "cluster lab's base_url",
          tokenId: "cluster lab's token_id",
          tokenSecret: 'LAB_TOKEN_SECRET',
          accessId: "cluster lab's access_client_id",
          accessSecret: 'LAB_ACCESS_SECRET',
        },
      },
    });
    expect(prod).toMatchObject({
      name: 'prod',
      vpcService: 'PVE_PROD',
      client: {
        baseUrl: 'https://pve/api2/json',
        tokenId: 'mcp@pve!prod',
        tokenSecret: PROD_SECRET,
        accessClientId: undefined,
        timeoutMs: 30_000,
      },
    });
    expect(prod!.client.binding).toBe((e as unknown as { PVE_PROD: Fetcher }).PVE_PROD);
    expect(config.pve).toBe(lab!.client);
    // Every named secret is scrubbed wherever upstream text goes.
    expect(config.secrets).toEqual(
      expect.arrayContaining([LAB_SECRET, ACCESS_SECRET, PROD_SECRET]),
    );
    expect(
      configProblems(config, new Request('https://mcp.example.com/health')),
    ).not.toContainEqual(expect.objectContaining({ check: 'proxmox' }));
  });

  it('keeps the single-cluster settings working as one cluster named default', () => {
    const config = configOf(
      env({
        PVE_BASE_URL: 'https://pve.example.com',
        PVE_TOKEN_ID: 'mcp@pve!mcp',
        PVE_TOKEN_SECRET: LAB_SECRET,
      }),
    );
    if ('error' in config.clusters) throw new Error(config.clusters.error);
    expect(config.clusters.listed).toBe(false);
    expect(config.clusters.all.map((c) => c.name)).toEqual(['default']);
    expect(config.pve).toMatchObject({
      baseUrl: 'https://pve.example.com/api2/json',
      tokenSecret: LAB_SECRET,
    });
    expect(config.secrets).toContain(LAB_SECRET);
  });

  it('refuses PVE_CLUSTERS beside the single-cluster settings, naming them', () => {
    expect(
      clusterError(
        twoClusters({ PVE_BASE_URL: 'https://pve.example.com', PVE_TOKEN_ID: 'x@pve!y' }),
      ),
    ).toContain(
      'set PVE_CLUSTERS or the single-cluster settings, not both: remove PVE_BASE_URL, PVE_TOKEN_ID',
    );
    // The single-cluster binding too, unless a cluster names it as its own.
    expect(clusterError(twoClusters({ PVE: binding() }))).toContain('remove the PVE binding');
    const own = configOf(
      twoClusters({ PVE: binding() }, [LAB, { ...PROD, vpc_service: 'PVE' }]),
    ).clusters;
    expect('error' in own ? own.error : own.all[1]!.vpcService).toBe('PVE');
    // So is a variable a cluster names for its secret.
    const named = configOf(
      twoClusters({ PVE_TOKEN_SECRET: PROD_SECRET }, [
        LAB,
        { ...PROD, token_secret_var: 'PVE_TOKEN_SECRET' },
      ]),
    ).clusters;
    expect('error' in named ? named.error : named.all[1]!.client.tokenSecret).toBe(PROD_SECRET);
  });

  it('never takes a secret written in the JSON, and says where it goes instead', () => {
    const error = clusterError(
      twoClusters({}, [
        { ...LAB, token_secret: LAB_SECRET, access_client_secret: ACCESS_SECRET },
        PROD,
      ]),
    );
    expect(error).toContain(
      'PVE_CLUSTERS[0].token_secret is never read from PVE_CLUSTERS: put the secret in a variable',
    );
    expect(error).toContain('PVE_CLUSTERS[0].access_client_secret is never read');
    expect(error).not.toContain('unknown key');
  });

  it('says where a private CA goes instead of pretending to use one', () => {
    expect(
      clusterError(twoClusters({}, [{ ...LAB, ca: '-----BEGIN CERTIFICATE-----' }])),
    ).toContain(
      "PVE_CLUSTERS[0].ca cannot be set in the Worker: a Worker's fetch trusts only public CAs. For a private CA, reach the cluster through a Workers VPC service created with --certificate-authority",
    );
  });

  it.each<[string, unknown, string]>([
    [
      'an unknown key',
      [{ ...LAB, tokenid: 'x' }],
      'PVE_CLUSTERS[0]: unknown key "tokenid"; allowed: name, base_url, vpc_service, token_id, token_secret_var, access_client_id, access_secret_var, timeout_ms',
    ],
    [
      'a name that is not a slug',
      [{ ...LAB, name: 'Prod Cluster' }],
      'PVE_CLUSTERS[0].name must be a short slug',
    ],
    [
      'one name twice',
      [LAB, { ...PROD, name: 'lab' }],
      'PVE_CLUSTERS[1].name: "lab" names two clusters; each name once',
    ],
    [
      'neither a URL nor a binding',
      [{ ...LAB, base_url: undefined }],
      'PVE_CLUSTERS[0] ("lab"): set base_url, vpc_service, or both',
    ],
    [
      'a token id that is not one',
      [{ ...LAB, token_id: 'mcp' }],
      'PVE_CLUSTERS "lab" token_id must look like user@realm!tokenid',
    ],
    [
      'a secret variable that is a secret',
      [{ ...LAB, token_secret_var: LAB_SECRET }],
      'PVE_CLUSTERS[0].token_secret_var must be the name of a secret variable, like PROD_TOKEN_SECRET',
    ],
    [
      'an Access secret (hex) pasted as its variable, never echoing it',
      [{ ...LAB, access_secret_var: HEX_SECRET }],
      'PVE_CLUSTERS[0].access_secret_var looks like a secret, not the name of the variable that holds it',
    ],
    [
      'a setting of the server of its own as a secret',
      [{ ...LAB, token_secret_var: 'OIDC_CLIENT_SECRET' }],
      'PVE_CLUSTERS[0].token_secret_var is a setting of this server of its own: name a variable of the cluster',
    ],
    [
      'a binding of the server of its own as a VPC service',
      [{ ...PROD, vpc_service: 'OAUTH_KV' }],
      'PVE_CLUSTERS[0].vpc_service is a setting of this server of its own',
    ],
    [
      'a secret variable that is not set',
      [{ ...LAB, token_secret_var: 'NOPE_SECRET' }],
      'PVE_CLUSTERS "lab": token_secret_var names NOPE_SECRET, which is not set (`wrangler secret put NOPE_SECRET`)',
    ],
    [
      'an access id without its secret',
      [{ ...LAB, access_secret_var: undefined }],
      'set both PVE_CLUSTERS "lab" access_client_id and PVE_CLUSTERS "lab" access_secret_var, or neither',
    ],
    [
      'a binding the Worker does not have',
      [{ ...PROD, vpc_service: 'PVE_STAGING' }],
      'PVE_CLUSTERS "prod": vpc_service names PVE_STAGING, which is not a binding of this Worker (declare it under vpc_services in the Wrangler configuration)',
    ],
    [
      'plain http to a remote host',
      [{ ...LAB, base_url: 'http://10.0.0.5:8006' }],
      'PVE_CLUSTERS "lab" base_url must use https:',
    ],
    ['a deadline out of range', [{ ...LAB, timeout_ms: 5 }], 'PVE_CLUSTERS[0].timeout_ms'],
    ['an empty list', [], 'PVE_CLUSTERS must be a non-empty list of clusters'],
    ['an object, not a list', { lab: LAB }, 'PVE_CLUSTERS must be a non-empty list of clusters'],
    ['an entry that is not an object', ['lab'], 'PVE_CLUSTERS[0] must be an object'],
    [
      'too many',
      Array.from({ length: 17 }, (_, i) => ({ ...LAB, name: `c${i}` })),
      'PVE_CLUSTERS lists 17 clusters; at most 16',
    ],
  ])('names %s and what is allowed', (_, clusters, message) => {
    expect(clusterError(twoClusters({}, clusters))).toContain(message);
  });

  it('names JSON that is not JSON, without echoing it', () => {
    const error = clusterError(
      env({ PVE_CLUSTERS: `[{"name":"lab","token_secret":"${LAB_SECRET}"` }),
    );
    expect(error).toBe(
      'PVE_CLUSTERS is not JSON: it must be a list of clusters, [{ "name": ... }]',
    );
  });

  it("scrubs no value of the server's own settings a refused entry names", () => {
    const config = configOf(
      twoClusters({ PUBLIC_URL: 'https://mcp.example.com' }, [
        { ...LAB, token_secret_var: 'PUBLIC_URL' },
      ]),
    );
    expect('error' in config.clusters).toBe(true);
    expect(config.secrets).not.toContain('https://mcp.example.com');
    expect(config.secrets).toContain(ACCESS_SECRET);
  });

  it('is reported by /health as the Proxmox connection, with PVE_CLUSTERS as the fix', () => {
    const config = configOf(twoClusters({}, [{ ...LAB, token_secret_var: 'NOPE_SECRET' }]));
    expect(configProblems(config, new Request('https://mcp.example.com/health'))).toContainEqual({
      check: 'proxmox',
      message: expect.stringContaining('NOPE_SECRET, which is not set'),
      fix: expect.stringContaining('PVE_CLUSTERS'),
    });
  });
});
