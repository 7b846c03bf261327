// What test/support/setup/outbound-probe.ts hands the auth tests: a TCP trap that any connection counts as
// a leak, and a loopback redirect hop. Shared by the Node setup (types) and workerd tests.

import { inject } from 'vitest';

export interface OutboundProbe {
  /** Port of the trap, listening on 127.0.0.1 and [::1]: it counts connections, then drops them. */
  trapPort: number;
  /** An HTTP server answering every request with 302 to `landingUrl`. */
  hopUrl: string;
  /** An HTTP server that counts the requests it gets and answers 200. */
  landingUrl: string;
  /** GET → ProbeCounts (a third server, so reading the counts never adds to them). */
  countsUrl: string;
}

export interface ProbeCounts {
  trapConnections: number;
  landingRequests: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    outboundProbe: OutboundProbe;
  }
}

/** The probe's counters now; the project's files share them, so compare before with after. */
export async function probeCounts(): Promise<ProbeCounts> {
  const res = await fetch(inject('outboundProbe').countsUrl);
  return (await res.json()) as ProbeCounts;
}
