// Shared setup for the simulator's node tests: one simulator per test file, a fresh tenant per
// test, and waiting for a worker task to end (its status and log as the API reports them).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { SIMULATOR_TOKENS, startSimulator, type RunningSimulator } from '../../simulator/server.ts';
import { PveClient } from '../../src/proxmox/client.ts';
import { createSimClient, type SimResponse } from '../../simulator/control/sim-client.ts';

export type SimClient = ReturnType<typeof createSimClient>;

/** Task durations in these tests: long enough to see 'running', short enough to wait for. */
export const TASK_MS = 40;

export function useSimulator(prefix: string): () => SimClient {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ authFailDelayMs: 20, taskDurationMs: TASK_MS });
  });
  afterAll(() => sim.close());
  return () => createSimClient(sim.url, `${prefix}-${randomUUID().slice(0, 8)}`);
}

/** Our Proxmox client for a test's tenant, with one of the simulator's tokens (10 s a request). */
export function pveFor(sim: SimClient, token: keyof typeof SIMULATOR_TOKENS = 'admin'): PveClient {
  const { id, secret } = SIMULATOR_TOKENS[token];
  return new PveClient({
    baseUrl: `${sim.root}/api2/json`,
    tokenId: id,
    tokenSecret: secret,
    timeoutMs: 10_000,
  });
}

export interface TaskEnd {
  readonly status: Record<string, unknown>;
  readonly exitstatus: string;
  readonly log: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll a task until it stops; returns its status, exit status and log lines. */
export async function waitTask(
  c: SimClient,
  upid: unknown,
  node = String(upid).split(':')[1],
): Promise<TaskEnd> {
  expect(upid).toMatch(/^UPID:/);
  const path = `/nodes/${node}/tasks/${encodeURIComponent(String(upid))}`;
  for (let i = 0; i < 200; i++) {
    const res = await c.api('GET', `${path}/status`);
    const status = res.body.data as Record<string, unknown>;
    if (status.status === 'stopped') {
      const log = await c.api('GET', `${path}/log`, { query: { limit: 0 } });
      const lines = (log.body.data as { t: string }[]).map((line) => line.t);
      return { status, exitstatus: String(status.exitstatus), log: lines };
    }
    await sleep(10);
  }
  throw new Error(`task ${String(upid)} did not stop`);
}

/** Run an API call that forks a task and wait for it. */
export async function runTask(
  c: SimClient,
  method: string,
  path: string,
  form?: Record<string, string | number>,
): Promise<TaskEnd> {
  const res = await c.api(
    method,
    path,
    form === undefined ? {} : method === 'DELETE' ? { query: form } : { form },
  );
  expect(res.status, res.text).toBe(200);
  return waitTask(c, res.body.data);
}

/** Expect a PVE error reply: status and message (or parameter errors). */
export function expectError(
  res: SimResponse,
  status: number,
  message: string | Record<string, string>,
): void {
  expect(res.status, res.text).toBe(status);
  if (typeof message === 'string') expect(res.body.message).toBe(`${message}\n`);
  else expect(res.body.errors).toEqual(message);
}

/** GET an API path that must answer 200; its `data`, as the caller expects it to be shaped. */
export async function getData<T = Record<string, unknown>>(
  c: SimClient,
  path: string,
  query: Record<string, string | number> = {},
): Promise<T> {
  const res = await c.api('GET', path, { query });
  expect(res.status, res.text).toBe(200);
  return res.body.data as T;
}

/** A guest's volumes on a storage as `node` lists them: volid → size. */
export async function volumesOf(
  c: SimClient,
  node: string,
  storage: string,
  vmid: number,
): Promise<Record<string, number>> {
  const path = `/nodes/${node}/storage/${storage}/content`;
  const items = await getData<{ volid: string; size: number }[]>(c, path, { vmid });
  return Object.fromEntries(items.map((v) => [v.volid, v.size]));
}
