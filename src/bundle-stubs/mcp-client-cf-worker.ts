// Stands in for `@modelcontextprotocol/client/validators/cf-worker` with the same class from
// `@modelcontextprotocol/server/validators/cf-worker`, which the Worker bundles anyway.
//
// Not a stub: this code runs. agents' MCP client manager builds its default JSON-schema
// validator when its module loads (`new CompatibleWorkerJsonSchemaValidator()`, a subclass), so
// the class must be real. Both packages ship an identical copy (same source, each with its own
// inlined @cfworker/json-schema, about 22 KiB minified); this keeps one.

export { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';
