// The fetch wrapper that holds the OAuth library's own fetches to public https hosts without
// redirects (src/app/outbound-guard.ts): which requests it touches, what it changes in them, and,
// against real loopback servers (test/support/setup/outbound-probe.ts), that a 302 is not followed.

import { afterEach, beforeEach, describe, expect, it, inject, vi } from 'vitest';
import {
  guardedFetch,
  installOutboundGuard,
  LIBRARY_USER_AGENT_PREFIX,
} from '../../src/app/outbound-guard';
import type { HostCheck } from '../../src/app/public-host';
import { probeCounts } from '../support/worker/outbound-probe';

const LIBRARY_UA = `${LIBRARY_USER_AGENT_PREFIX}1.2.3 (+https://github.com/cloudflare/workers-oauth-provider)`;
const { hopUrl, landingUrl } = inject('outboundProbe');

type Call = { input: Parameters<typeof fetch>[0]; init: RequestInit | undefined };

/** A stand-in for the network that records what it was asked and answers 200. */
function recordingFetch(): { fetch: typeof fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fetch = async (input: Call['input'], init?: RequestInit) => {
    calls.push({ input, init });
    return new Response('{}');
  };
  return { fetch, calls };
}

const allowAll = (url: string): HostCheck => ({ ok: true, host: new URL(url).hostname });

let warnings: string[] = [];
beforeEach(() => {
  warnings = [];
  vi.spyOn(console, 'warn').mockImplementation(
    (...args: unknown[]) => void warnings.push(args.map(String).join(' ')),
  );
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('guardedFetch', () => {
  it("passes a request without the library's User-Agent through with the very same arguments", async () => {
    const net = recordingFetch();
    const init = { headers: { 'user-agent': 'proxmox-mcp' }, method: 'POST', body: 'x' };
    await guardedFetch(net.fetch)('http://127.0.0.1:8006/api2/json/version', init);
    expect(net.calls).toHaveLength(1);
    expect(net.calls[0]!.input).toBe('http://127.0.0.1:8006/api2/json/version');
    expect(net.calls[0]!.init).toBe(init);
  });

  it.each([
    ['https://127.0.0.1/client.json', 'non_public_address'],
    ['https://169.254.169.254/latest/meta-data/', 'non_public_address'],
    ['https://metadata.google.internal/client.json', 'special_use_name'],
    ['http://client.example.com/client.json', 'not_https'],
  ])("refuses the library's fetch of %s (%s) without touching the network", async (url, reason) => {
    const net = recordingFetch();
    const fetching = guardedFetch(net.fetch)(url, { headers: { 'User-Agent': LIBRARY_UA } });
    await expect(fetching).rejects.toThrow(TypeError);
    await expect(fetching).rejects.toThrow(reason);
    expect(net.calls).toHaveLength(0);
    expect(warnings.map((w) => JSON.parse(w) as unknown)).toEqual([
      expect.objectContaining({ msg: 'oauth_fetch_refused', reason }),
    ]);
  });

  it("sends the library's fetch of a public host with redirect manual, keeping the rest", async () => {
    const net = recordingFetch();
    const signal = new AbortController().signal;
    const init = {
      headers: { Accept: 'application/json', 'User-Agent': LIBRARY_UA },
      signal,
      cache: 'no-store' as const,
    };
    await guardedFetch(net.fetch)('https://claude.ai/oauth/mcp-oauth-client-metadata', init);
    expect(net.calls).toEqual([
      {
        input: 'https://claude.ai/oauth/mcp-oauth-client-metadata',
        init: { ...init, redirect: 'manual' },
      },
    ]);
  });

  it('reads the User-Agent from a Request when init has no headers', async () => {
    const net = recordingFetch();
    const request = new Request('https://10.0.0.1/client.json', {
      headers: { 'User-Agent': LIBRARY_UA },
    });
    await expect(guardedFetch(net.fetch)(request)).rejects.toThrow('non_public_address');
    expect(net.calls).toHaveLength(0);
  });

  it('reads the User-Agent from a Headers object given as init.headers, and passes it on as it is', async () => {
    const net = recordingFetch();
    const library = { headers: new Headers({ 'User-Agent': LIBRARY_UA }) };
    await expect(guardedFetch(net.fetch)('https://10.0.0.1/client.json', library)).rejects.toThrow(
      'non_public_address',
    );
    const ours = { headers: new Headers({ Accept: 'application/json' }) };
    await guardedFetch(net.fetch)('https://10.0.0.1/api2/json/version', ours);
    expect(net.calls).toEqual([{ input: 'https://10.0.0.1/api2/json/version', init: ours }]);
    expect(net.calls[0]!.init!.headers).toBe(ours.headers);
  });

  it("goes by init's headers when given, as fetch does (they replace the Request's)", async () => {
    const net = recordingFetch();
    const request = new Request('https://10.0.0.1/client.json', {
      headers: { 'User-Agent': LIBRARY_UA },
    });
    await guardedFetch(net.fetch)(request, { headers: { Accept: 'application/json' } });
    expect(net.calls).toHaveLength(1);
  });
});

describe('guardedFetch against a real redirect', () => {
  it("gets the 302 back as a non-ok response, and the redirect's target gets no request", async () => {
    const asked: (RequestInit | undefined)[] = [];
    // The real network, minus the library's User-Agent: this isolate's global fetch is guarded
    // too and would (rightly) refuse a loopback URL that carries it.
    const network = (input: Call['input'], init?: RequestInit) => {
      asked.push(init);
      return fetch(input, { redirect: init?.redirect });
    };
    const before = await probeCounts();
    const res = await guardedFetch(network, allowAll)(hopUrl, {
      headers: { 'User-Agent': LIBRARY_UA },
    });
    expect((await probeCounts()).landingRequests - before.landingRequests).toBe(0);
    expect(res.status).toBe(302);
    expect(res.ok).toBe(false);
    expect(res.headers.get('location')).toBe(landingUrl);
    expect(asked.map((init) => init?.redirect)).toEqual(['manual']);
  });

  it('leaves other fetches following redirects (so the hop above really redirects)', async () => {
    const before = await probeCounts();
    const res = await guardedFetch(fetch, allowAll)(hopUrl);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ landed: true });
    expect((await probeCounts()).landingRequests - before.landingRequests).toBe(1);
  });
});

describe('installOutboundGuard', () => {
  it("wraps a target's fetch once, however often it is called", async () => {
    const net = recordingFetch();
    const target = { fetch: net.fetch };
    installOutboundGuard(target);
    const wrapped = target.fetch;
    installOutboundGuard(target);
    expect(target.fetch).toBe(wrapped);
    expect(target.fetch).not.toBe(net.fetch);
    await expect(
      target.fetch('https://[::1]/client.json', { headers: { 'User-Agent': LIBRARY_UA } }),
    ).rejects.toThrow(TypeError);
    await target.fetch('https://[::1]/anything');
    expect(net.calls).toHaveLength(1);
  });
});
