// Where a call's spans go and which are recorded: what ../config/tracing.ts reads from the
// environment and ../calls/spans.ts records by. Types only.

export interface TracingSettings {
  /** Where spans are POSTed (OTLP/HTTP, JSON). */
  endpoint: string;
  /** Sent with each export (an API key, a tenant). */
  headers: Readonly<Record<string, string>>;
  /** The share of traces recorded, 0 to 1 (default 1, OpenTelemetry's): those started here... */
  ratio: number;
  /** ...and a client's too, unless its sampled flag decides (parent-based: the default). */
  parentBased: boolean;
  /** The spans' `service.name` (default proxmox-mcp). */
  serviceName: string;
}
