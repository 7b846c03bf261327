// Values the global setup hands to tests (vitest provide/inject).
import type { EndpointDef } from './support/pve-endpoint';

declare module 'vitest' {
  export interface ProvidedContext {
    simulatorUrl: string;
    simulatorTokenId: string;
    simulatorTokenSecret: string;
    pveEndpoints: EndpointDef[] | null;
  }
}
