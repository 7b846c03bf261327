// The one change made to the SDK's server: server/discover also names the 2025 versions this URL
// serves (through initialize, in a session); the SDK lists only the modern ones it serves itself.
// Its answer is extended, not replaced, so capabilities and instructions stay the SDK's own. It
// reaches into the SDK's private `_ondiscover`, here only: test/mcp/modern/handler.worker.test.ts
// ("answers server/discover ...") pins the list, and fails should a new SDK release move it.

import type { Server } from '@modelcontextprotocol/server';
import { SUPPORTED_PROTOCOL_VERSIONS as LEGACY_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

interface Discovering {
  _ondiscover(): { supportedVersions: string[] };
}

export function listLegacyVersions(server: Server): void {
  const discovering = server as unknown as Discovering;
  const own = discovering._ondiscover.bind(server);
  discovering._ondiscover = () => {
    const answer = own();
    const legacy = LEGACY_VERSIONS.filter((v) => !answer.supportedVersions.includes(v));
    return { ...answer, supportedVersions: [...answer.supportedVersions, ...legacy] };
  };
}
