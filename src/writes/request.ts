// A write as the kernel handles it: one request to Proxmox, shown the same way in a preview, to
// an approver and in the result (secrets redacted), and sent from here only: `sendRequest` is the
// one call of the client's write methods in src/ (test/layers.node.test.ts holds it so). A
// request whose answer was lost may or may not have been carried out: it is never sent again,
// and `sendWrite` ends the call `indeterminate`, saying what to check.

import type { z } from 'zod';
import { ToolFailure } from '../calls/tool-spec';
import type { FormParams, PveClient } from '../proxmox/client';
import { PveError, writeMayHaveHappened } from '../proxmox/errors';
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

/**
 * Sends one write, as sendRequest. A failure that may have happened after Proxmox took the
 * request (by default: a lost answer, writeMayHaveHappened) ends the call `indeterminate`, with
 * Proxmox's error followed by `lost`: what may have happened, and what to check.
 */
export async function sendWrite<S extends z.ZodType>(
  pve: PveClient,
  r: { method: WriteRequest['method']; path: string; params: FormParams },
  answer: S,
  lost: string,
  mayHaveHappened: (err: PveError) => boolean = writeMayHaveHappened,
): Promise<z.output<S>> {
  try {
    return await sendRequest(pve, r, answer);
  } catch (err) {
    if (err instanceof PveError && mayHaveHappened(err))
      throw new ToolFailure('indeterminate', `${err.message} ${lost}`);
    throw err;
  }
}
