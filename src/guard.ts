// DNS-rebinding protection for AUTH_MODE=none: without authentication, only a browser or client
// on this machine may talk to the server, so the Host and any Origin must be loopback. A page on
// evil.example that rebinds its name to 127.0.0.1 still sends Host: evil.example, and is refused.

export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return (
    h === 'localhost' ||
    h.endsWith('.localhost') ||
    h === '::1' ||
    /^127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h)
  );
}

/** Returns why a request is refused, or null when Host and Origin are both loopback. */
export function loopbackViolation(request: Request): string | null {
  const host = request.headers.get('host') ?? new URL(request.url).host;
  if (!isLoopbackHostname(hostnameOf(`http://${host}`))) return 'Host is not a loopback address';
  const origin = request.headers.get('origin');
  if (origin !== null && !isLoopbackHostname(hostnameOf(origin))) return 'Origin is not a loopback address';
  return null;
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
