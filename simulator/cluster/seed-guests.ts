// The seeded guests as Guest records: configs from seed-guest-specs.ts, a few snapshots (101: a
// tree with a RAM state; 120, ten days old; 201) and the run-time figures of the running ones.
import { blankGuest, type Guest, type GuestConfig } from './cluster-state.ts';
import { guestFacts } from './guest-config.ts';
import { CTIME, type GuestSpec } from './seed-guest-builders.ts';
import { GUEST_SPECS } from './seed-guest-specs.ts';

const DAY = 86_400;

/** Snapshot sections: the config as it was, plus snaptime, description and a RAM state. */
function seedSnapshots(spec: GuestSpec, now: number): Map<string, GuestConfig> {
  const { parent: _parent, ...base } = spec.config;
  const snaps = new Map<string, GuestConfig>();
  if (spec.vmid === 101) {
    snaps.set('pre-upgrade', {
      ...base,
      memory: '2048',
      description: 'Before the Debian 13 upgrade',
      snaptime: String(CTIME + 86_400),
    });
    snaps.set('post-upgrade', {
      ...base,
      parent: 'pre-upgrade',
      snaptime: String(CTIME + 90_000),
      runningmachine: 'pc-i440fx-10.0+pve1',
      vmstate: 'local-lvm:vm-101-state-post-upgrade',
    });
  }
  if (spec.vmid === 120) {
    snaps.set('before_samba_update', {
      ...base,
      description: 'Before updating Samba to 4.22',
      snaptime: String(Math.floor(now / 1000) - 10 * DAY - 4_380),
    });
  }
  if (spec.vmid === 201) {
    snaps.set('before-grafana-12', {
      ...base,
      description: 'Working Grafana 11',
      snaptime: String(CTIME + 120_000),
    });
  }
  return snaps;
}

export function seedGuests(now: number, specs: readonly GuestSpec[] = GUEST_SPECS): Guest[] {
  return specs.map((spec, index) => {
    const guest: Guest = {
      ...blankGuest(spec.vmid, spec.type, spec.node, { ...spec.config }),
      snapshots: seedSnapshots(spec, now),
      status: spec.running ? 'running' : 'stopped',
      agentRunning: spec.running && spec.agentUp === true,
      ...(spec.pool !== undefined ? { pool: spec.pool } : {}),
    };
    if (spec.running) {
      const load = (index % 5) + 1;
      const facts = guestFacts(guest, 16);
      Object.assign(guest, {
        mem: Math.round(facts.maxmem * (0.35 + load * 0.08)),
        // PVE reports disk usage only for containers; for VMs it is 0 without the guest agent.
        disk: spec.type === 'lxc' ? Math.round(facts.maxdisk * (0.1 + load * 0.07)) : 0,
        cpu: Math.round((0.0049 * load + 0.0003 * index) * 1e6) / 1e6,
        netin: 2_456_116_121 - index * 97_531_357,
        netout: 545_248_946 - index * 31_415_926,
        diskread: 4_510_777_856 - index * 123_456_789,
        diskwrite: 6_059_209_728 - index * 234_567_890,
        bootedAt: now - (874_350 - index * 3_600) * 1000,
        pid: 1_044_989 + index * 7_919,
      });
    }
    return guest;
  });
}
