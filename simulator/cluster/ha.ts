// HA resources as pve-ha-manager keeps them: ha/resources.cfg (sections by sid `vm:120`), its
// digest, parse_sid, and the service state the CRM reports (manager_status) for status/current's
// `ha` and /cluster/resources' `hastate`. The CRM itself is not simulated: a service's state is
// the one its requested state leads to.
import { createHash } from 'node:crypto';
import { dieError } from '../schema/pve-error.ts';
import type { ClusterState, Guest, HaResource, NodeState } from './cluster-state.ts';

/** get_ha_resource_type: qemu guests are `vm`, containers `ct`. */
export const haType = (type: Guest['type']): HaResource['type'] => (type === 'qemu' ? 'vm' : 'ct');

export const guestSid = (guest: Pick<Guest, 'type' | 'vmid'>) =>
  `${haType(guest.type)}:${guest.vmid}`;

/** PVE::HA::Config::parse_sid: `vm:100`, `ct:100`, or a bare VMID looked up in the vmlist. */
export function parseSid(state: ClusterState, sid: string): string {
  const bare = /^(\d+)$/.exec(sid);
  if (bare) {
    const guest = state.guests.get(Number(bare[1]));
    if (!guest) throw dieError(`unable to detect SID from VMID - VM/CT ${bare[1]} does not exist`);
    return guestSid(guest);
  }
  if (/^(\S+):(\S+)$/.test(sid)) return sid;
  throw dieError(`unable to parse service id '${sid}'`);
}

/** The resources.cfg text SectionConfig writes: `<type>: <name>` then tab-indented options. */
function resourcesCfgText(state: ClusterState): string {
  let raw = '';
  for (const [sid, resource] of state.haResources) {
    const { type, ...options } = resource;
    raw += `${type}: ${sid.slice(sid.indexOf(':') + 1)}\n`;
    for (const key of Object.keys(options).sort()) {
      raw += `\t${key} ${String(options[key as keyof typeof options])}\n`;
    }
    raw += '\n';
  }
  return raw;
}

/** The config digest (SHA-1 of the file), as every read of ha/resources.cfg returns it. */
export function haDigest(state: ClusterState): string {
  return createHash('sha1').update(resourcesCfgText(state)).digest('hex');
}

/** The CRM's service state: none for ignored resources (they leave the manager status). */
function serviceState(resource: HaResource): string | undefined {
  if (resource.state === 'ignored') return undefined;
  return resource.state === 'started' ? 'started' : 'stopped';
}

/** get_service_status: what status/current reports as `ha`. */
export function haStatus(state: ClusterState, guest: Guest): Record<string, unknown> {
  const resource = state.haResources.get(guestSid(guest));
  const service = resource && serviceState(resource);
  return service === undefined ? { managed: 0 } : { managed: 1, state: service };
}

/** /cluster/resources `hastate` of a guest: the service state, else the configured state. */
export function guestHaState(state: ClusterState, guest: Guest): string | undefined {
  const resource = state.haResources.get(guestSid(guest));
  return resource && (serviceState(resource) ?? resource.state);
}

/**
 * /cluster/resources `hastate` of a node: the CRM's node_status, which exists once HA has
 * resources (the seeded cluster has); a node that drops out is 'unknown' until it is fenced.
 */
export function nodeHaState(state: ClusterState, node: NodeState): string | undefined {
  if (state.haResources.size === 0) return undefined;
  return node.online ? 'online' : 'unknown';
}

/** delete_service_from_config, as destroy with purge=1 runs it. */
export function removeHaResource(state: ClusterState, sid: string): boolean {
  return state.haResources.delete(sid);
}
