// Values the global setup hands to tests (vitest provide/inject).
import type { BrowserChoice } from './setup/browser';
import type { EndpointDef } from './pve-endpoint';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A Node project's shared simulator (./setup/servers.ts); a workerd file's is its own. */
    simulatorUrl?: string;
    simulatorTokenId: string;
    simulatorTokenSecret: string;
    /** Every simulator token by name (admin, audit, storage and the people's: alice, bob...). */
    simulatorTokens: Record<string, { id: string; secret: string }>;
    pveEndpoints: EndpointDef[] | null;
    /** A Node project's shared fake IdP (./fake-idp.ts, ./setup/servers.ts); no trailing slash. */
    fakeIdpUrl?: string;
    /** http://127.0.0.1:PORT of the notification receiver (test/support/setup/receivers.ts). */
    receiverUrl: string;
    /** The browser the browser tests launch; null when none was found (test/support/setup/browser.ts). */
    browser: BrowserChoice | null;
  }
}
