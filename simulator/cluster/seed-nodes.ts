// The seeded nodes' records, from a few figures each: address, fingerprint, disk and swap derived.
import { createHash } from 'node:crypto';
import type { NodeState } from './cluster-state.ts';

export interface NodeSpec {
  readonly nodeid: number;
  readonly maxcpu: number;
  readonly sockets: number;
  readonly cpuModel: string;
  readonly maxmem: number;
  readonly mem: number;
  readonly cpu: number;
  readonly uptime: number;
  readonly bridges?: readonly string[];
  /** The cluster network's first three octets; default 10.10.0. */
  readonly network?: string;
}

const GIB = 1024 ** 3;

export function node(name: string, spec: NodeSpec, now: number): NodeState {
  return {
    name,
    online: true,
    nodeid: spec.nodeid,
    ip: `${spec.network ?? '10.10.0'}.${10 + spec.nodeid}`,
    maxcpu: spec.maxcpu,
    sockets: spec.sockets,
    cpuModel: spec.cpuModel,
    maxmem: spec.maxmem,
    mem: spec.mem,
    cpu: spec.cpu,
    maxdisk: 100_861_726_720,
    disk: 11_843_256_320 + spec.maxcpu * 104_857_600,
    swapTotal: 8 * GIB,
    swapUsed: spec.nodeid * 12_582_912,
    loadavg: [(spec.cpu * 20).toFixed(2), (spec.cpu * 17).toFixed(2), (spec.cpu * 15).toFixed(2)],
    bootedAt: now - spec.uptime * 1000,
    sslFingerprint: fingerprintFor(name),
    bridges: spec.bridges ?? ['vmbr0'],
  };
}

/** A stable, fake SHA-256 certificate fingerprint per node name (dev data only). */
function fingerprintFor(name: string): string {
  const digest = createHash('sha256')
    .update(`pve-simulator-cert:${name}`)
    .digest('hex')
    .toUpperCase();
  return digest.match(/../g)?.join(':') ?? digest;
}
