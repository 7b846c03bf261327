// The host rule for the OAuth library's outbound fetches, run in workerd so that its URL parser
// (the one the Worker uses) does the normalising: hex, octal and integer IPv4, mapped IPv6.

import { describe, expect, it } from 'vitest';
import { checkPublicHost, checkPublicHttpsUrl } from '../../src/app/public-host';

describe('checkPublicHttpsUrl', () => {
  it.each([
    'https://168.63.129.16/c.json',
    'https://100.100.100.200/c.json',
    'https://metadata.goog/c.json',
  ])('refuses %s, a cloud metadata service', (url) => {
    expect(checkPublicHttpsUrl(url)).toMatchObject({ ok: false, reason: 'non_public_address' });
  });

  it.each([
    ['https://claude.ai/oauth/mcp-oauth-client-metadata', 'claude.ai'],
    ['https://CLIENT.Example.COM./client.json', 'client.example.com'],
    ['https://app.localhost.example.com/c.json', 'app.localhost.example.com'],
    ['https://xn--mnchen-3ya.de/c.json', 'xn--mnchen-3ya.de'],
    ['https://8.8.8.8/c.json', '8.8.8.8'],
    ['https://100.63.255.255/c.json', '100.63.255.255'],
    ['https://172.32.0.1/c.json', '172.32.0.1'],
    ['https://223.255.255.255/c.json', '223.255.255.255'],
    ['https://[2606:4700:4700::1111]/c.json', '[2606:4700:4700::1111]'],
  ])('allows %s', (url, host) => {
    expect(checkPublicHttpsUrl(url)).toEqual({ ok: true, host });
  });

  it.each([
    ['https://127.0.0.1/c.json', '127.0.0.0/8'],
    ['https://127.8.9.10:8443/c.json', '127.0.0.0/8'],
    ['https://0x7f.1/c.json', '127.0.0.0/8'],
    ['https://0177.0.0.1/c.json', '127.0.0.0/8'],
    ['https://2130706433/c.json', '127.0.0.0/8'],
    ['https://127.1/c.json', '127.0.0.0/8'],
    ['https://0.0.0.0/c.json', '0.0.0.0/8'],
    ['https://10.0.0.1/c.json', '10.0.0.0/8'],
    ['https://100.64.0.1/c.json', '100.64.0.0/10'],
    ['https://100.127.255.255/c.json', '100.64.0.0/10'],
    ['https://169.254.169.254/latest/meta-data', '169.254.0.0/16'],
    ['https://172.16.0.1/c.json', '172.16.0.0/12'],
    ['https://172.31.255.255/c.json', '172.16.0.0/12'],
    ['https://192.0.0.170/c.json', '192.0.0.0/24'],
    ['https://192.0.2.1/c.json', '192.0.2.0/24'],
    ['https://192.168.1.1/c.json', '192.168.0.0/16'],
    ['https://198.18.0.1/c.json', '198.18.0.0/15'],
    ['https://198.19.255.255/c.json', '198.18.0.0/15'],
    ['https://198.51.100.7/c.json', '198.51.100.0/24'],
    ['https://203.0.113.7/c.json', '203.0.113.0/24'],
    ['https://224.0.0.1/c.json', '224.0.0.0/3'],
    ['https://240.0.0.1/c.json', '224.0.0.0/3'],
    ['https://255.255.255.255/c.json', '224.0.0.0/3'],
    ['https://[::]/c.json', '::/128'],
    ['https://[::1]/c.json', '::1/128'],
    ['https://[0:0:0:0:0:0:0:1]/c.json', '::1/128'],
    ['https://[::ffff:127.0.0.1]/c.json', '::ffff:0:0/96'],
    ['https://[::ffff:7f00:1]/c.json', '::ffff:0:0/96'],
    ['https://[::ffff:8.8.8.8]/c.json', '::ffff:0:0/96'],
    ['https://[::127.0.0.1]/c.json', '::/96'],
    ['https://[64:ff9b::a9fe:a9fe]/c.json', '64:ff9b::/96'],
    ['https://[fc00::1]/c.json', 'fc00::/7'],
    ['https://[fd12:3456::1]/c.json', 'fc00::/7'],
    ['https://[fe80::1]/c.json', 'fe80::/10'],
    ['https://[febf::1]/c.json', 'fe80::/10'],
    ['https://[fec0::1]/c.json', 'fec0::/10'],
    ['https://[ff02::1]/c.json', 'ff00::/8'],
    ['https://[2001:db8::1]/c.json', '2001:db8::/32'],
    ['https://[2001:0:4136:e378::1]/c.json', '2001::/23'],
    ['https://[2002:7f00:1::1]/c.json', '2002::/16'],
    ['https://[100::1]/c.json', 'outside 2000::/3'],
  ])('refuses %s (%s)', (url, range) => {
    expect(checkPublicHttpsUrl(url)).toMatchObject({
      ok: false,
      reason: 'non_public_address',
      range: expect.stringContaining(range),
    });
  });

  it.each([
    ['https://localhost/c.json', 'single_label_name'],
    ['https://LOCALHOST./c.json', 'single_label_name'],
    ['https://intranet-box/c.json', 'single_label_name'],
    ['https://mcp.localhost/c.json', 'special_use_name'],
    ['https://a.b.localhost./c.json', 'special_use_name'],
    ['https://printer.local/c.json', 'special_use_name'],
    ['https://metadata.google.internal/c.json', 'special_use_name'],
    ['https://nas.lan/c.json', 'special_use_name'],
    ['https://router.home/c.json', 'special_use_name'],
    ['https://router.home.arpa/c.json', 'special_use_name'],
    ['https://wiki.intranet/c.json', 'special_use_name'],
    ['https://ad.corp/c.json', 'special_use_name'],
    ['https://db.private/c.json', 'special_use_name'],
    ['https://host.localdomain/c.json', 'special_use_name'],
    ['https://client.test/c.json', 'special_use_name'],
    ['https://client.example/c.json', 'special_use_name'],
    ['https://client.invalid/c.json', 'special_use_name'],
    ['https://hidden.onion/c.json', 'special_use_name'],
    ['https://1.0.0.127.in-addr.arpa/c.json', 'special_use_name'],
    ['https://foo..bar/c.json', 'malformed_name'],
    ['http://client.example.com/c.json', 'not_https'],
    ['file:///etc/passwd', 'not_https'],
    ['not a url', 'invalid_url'],
  ])('refuses %s as %s', (url, reason) => {
    expect(checkPublicHttpsUrl(url)).toMatchObject({ ok: false, reason });
  });
});

describe('checkPublicHost', () => {
  it.each([
    ['127.0.0.1.', 'non_public_address'],
    ['[::1]', 'non_public_address'],
    ['01.02.03.04', 'malformed_name'],
    ['example.0x7f', 'malformed_name'],
    ['[1::2::3]', 'malformed_name'],
    ['[1.2.3.4::1]', 'malformed_name'],
    ['[0:0:0:0:0:ffff:127.0.0.1]', 'non_public_address'],
    ['', 'malformed_name'],
  ])('refuses the hostname %j (not through URL) as %s', (host, reason) => {
    expect(checkPublicHost(host)).toMatchObject({ ok: false, reason });
  });
});
