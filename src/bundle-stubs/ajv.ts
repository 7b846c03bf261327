// Stands in for `ajv` (a JSON-schema compiler: about 110 KiB minified, with fast-uri and
// json-schema-traverse).
//
// Why it never runs: the MCP SDK v1 `Server` creates an `AjvJsonSchemaValidator` (which creates
// an Ajv) only when it is given no `jsonSchemaValidator`. The one v1 Server here
// (src/mcp/legacy/agent.ts) is given `CfWorkerJsonSchemaValidator`, and agents never builds a
// v1 Server itself; the SDK v2 server validates with @cfworker/json-schema on workerd. So the
// SDK's ajv-provider module is loaded but its class is never constructed.

import { leftOut } from './left-out';

export default class Ajv {
  constructor() {
    throw leftOut('ajv (new Ajv)', 'ajv.ts');
  }
}
