// A write as the kernel handles it: one request to Proxmox, shown the same way in a preview, to
// an approver and in the result (secrets redacted), and sent from here only: `sendRequest` is the
// one call of the client's write methods in src/ (test/layers.node.test.ts holds it so), and
// ./plan.ts its one caller.

import type { z } from 'zod';
import type { FormParams, PveClient } from '../proxmox/client';
import { describeParams, shownParams } from './shown-params';

/** One request that changes something in Proxmox. */
export interface WriteRequest {
  method: 'POST' | 'PUT' | 'DELETE';
  /** Below /api2/json, every segment encoded. */
  path: string;
  /** The exact form (POST, PUT) or query (DELETE) parameters. */
  params: Record<string, string>;
}

/** A request as people are shown it (the raw API tool's may be a GET). */
type Shown = { method: string; path: string; params: Record<string, string> };

/** The request as results show it: method, path and parameters, secrets redacted. */
export function requestView<R extends Shown>(r: R): Pick<R, 'method'> & Omit<Shown, 'method'> {
  return { method: r.method, path: r.path, params: shownParams(r.params) };
}

/** "POST /nodes/pve1/qemu/100/status/stop with timeout=30" for a sentence, secrets redacted. */
export function requestLine(r: Shown): string {
  return `${r.method} ${r.path}${Object.keys(r.params).length ? ` with ${describeParams(r.params)}` : ''}`;
}

/** The request for an approver: one row for it, one per parameter (secrets redacted). */
export function requestRows(r: Shown): Record<string, string> {
  return { request: `${r.method} ${r.path}`, ...shownParams(r.params) };
}

/** Sends one write and reads its answer with `answer`; Proxmox's errors as they come. */
export function sendRequest<S extends z.ZodType>(
  pve: PveClient,
  r: { method: WriteRequest['method']; path: string; params: FormParams },
  answer: S,
): Promise<z.output<S>> {
  return pve.write(r.method, r.path, answer, r.params);
}
