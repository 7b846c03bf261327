// Values the global setup hands to tests (vitest provide/inject), and the Worker's exports.
import type { EndpointDef } from './support/pve-endpoint';

declare module 'vitest' {
  export interface ProvidedContext {
    simulatorUrl: string;
    simulatorTokenId: string;
    simulatorTokenSecret: string;
    pveEndpoints: EndpointDef[] | null;
  }
}

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import('../src/index');
    }
  }
}
