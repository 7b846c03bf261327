// One endpoint definition cut out of the real PVE API schema (Node-free, shared by the loader,
// which runs in Node, and the checker, which runs in workerd).
export interface EndpointDef {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path template as the schema writes it, e.g. /nodes/{node}/qemu. */
  path: string;
  /** The info.<METHOD>.parameters object, verbatim (null if the method declares none). */
  parameters: unknown;
  /** The info.<METHOD>.returns object, only when asked for (loadEndpoints' withReturns). */
  returns?: unknown;
}
