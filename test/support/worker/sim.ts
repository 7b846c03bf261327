// Talks to the Proxmox simulator's control API (/_sim): its request log, resets and faults.

import { inject } from 'vitest';
import type { GuestView } from '../../../simulator/control/guest-view';

export interface SimRequest {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string | null;
  params: Record<string, string> | null;
  contentLength: number | null;
  chunked: boolean;
  status: number;
  /** A streamed fault reply: body bytes the simulator handed its socket, and whether all were. */
  streamed?: { bytes: number; complete: boolean };
}

export interface SimFault {
  method?: string;
  path: string;
  times?: number;
  status?: number;
  body?: string | Record<string, unknown>;
  contentType?: string;
  headers?: Record<string, string>;
  reason?: string;
  delayMs?: number;
  drop?: boolean;
  hang?: boolean;
  taskExitStatus?: string;
  /**
   * Answer 200 with a JSON body of this many bytes, streamed (chunked unless `chunked: false`);
   * with `gzip`, compressed; with `hang`, its first piece and then nothing.
   */
  streamBytes?: number;
  chunked?: boolean;
  gzip?: boolean;
}

/**
 * The simulator of this file: a workerd test file's Worker has its own (TEST_SIMULATOR_URL, set
 * per Worker by vitest.config.ts); a Node file (calls/run-call.serial.test.ts) talks to its
 * project's (test/support/setup/servers.ts).
 */
function base(): string {
  const url = process.env.TEST_SIMULATOR_URL ?? inject('simulatorUrl');
  if (!url) throw new Error('no simulator: neither TEST_SIMULATOR_URL nor a simulator setup');
  return url;
}

async function controlAt(
  at: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const res = await fetch(`${at}/_sim${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok)
    throw new Error(`simulator control ${method} ${path}: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return text ? (JSON.parse(text) as unknown) : null;
}

/**
 * The simulator's default cluster (`sim`), or another of its clusters: a tenant of the same
 * process with a cluster of its own (`simCluster('prod')`, at /t/prod/api2/json).
 */
function simulatorAt(tenant: string | null) {
  const at = () => (tenant === null ? base() : `${base()}/t/${tenant}`);
  const control = (method: string, path: string, body?: unknown) =>
    controlAt(at(), method, path, body);
  return {
    /** Where it is, as PVE_BASE_URL or a cluster's base_url names it. */
    url: at,
    reset: () => control('POST', '/reset'),
    clearLog: () => control('DELETE', '/requests'),
    async requests(): Promise<SimRequest[]> {
      const out = (await control('GET', '/requests')) as { requests: SimRequest[] };
      return out.requests;
    },
    async writes(): Promise<SimRequest[]> {
      return (await this.requests()).filter((r) => r.method !== 'GET');
    },
    /** The requests Proxmox got, each as "METHOD /api2/json/path". */
    async requestLines(): Promise<string[]> {
      return (await this.requests()).map((r) => `${r.method} ${r.path}`);
    },
    /** The writes (not GET) Proxmox got, each as "METHOD /api2/json/path". */
    async writeLines(): Promise<string[]> {
      return (await this.writes()).map((r) => `${r.method} ${r.path}`);
    },
    fault: (fault: SimFault) => control('POST', '/faults', fault),
    clearFaults: () => control('DELETE', '/faults'),
    setNode: (node: string, state: 'online' | 'offline') =>
      control('POST', `/nodes/${node}/${state}`),
    config: (config: { authFailDelayMs?: number; taskDurationMs?: number }) =>
      control('POST', '/config', config),
    /** A guest's config, pending changes, snapshots and run state, read past the API under test. */
    guest: async (vmid: number) => (await control('GET', `/guests/${vmid}`)) as GuestView,
    /** Set a guest's config lock (e.g. 'backup'), or clear it with null. */
    setLock: (vmid: number, lock: string | null) =>
      lock === null
        ? control('DELETE', `/guests/${vmid}/lock`)
        : control('POST', `/guests/${vmid}/lock`, { lock }),
    /** Make a VM's QEMU guest agent answer (or not). */
    setAgent: (vmid: number, running: boolean) =>
      control('POST', `/guests/${vmid}/agent`, { running }),
    /** A running VM's QMP status: 'running', 'paused', 'prelaunch' or 'suspended'. */
    setQmpStatus: (vmid: number, qmpstatus: string) =>
      control('POST', `/guests/${vmid}/qmpstatus`, { qmpstatus }),
    /** Calls the simulated PVE API directly, as a test's own Proxmox client. */
    async api(method: string, path: string, params?: Record<string, string>): Promise<Response> {
      return fetch(`${at()}/api2/json${path}`, {
        method,
        headers: {
          Authorization: `PVEAPIToken=${inject('simulatorTokenId')}=${inject('simulatorTokenSecret')}`,
          ...(params ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: params ? new URLSearchParams(params).toString() : undefined,
      });
    },
  };
}

/** The simulator's default cluster. */
export const sim = simulatorAt(null);

/** Another cluster of the simulator, freshly seeded on first use. */
export const simCluster = (name: string) => simulatorAt(name);
