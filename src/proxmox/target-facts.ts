// The facts of the guest a call acts on that the policy's `target.` rules reach, read from
// Proxmox before the policy decides. One GET /cluster/resources answers most of them (pool, tags,
// name, node, status, template, lock, HA state, kind) wherever the guest runs, without asking
// the guest's QEMU (name, status and template as the node last reported them, within seconds);
// qmpstatus (its status/current) and protection (its config) cost one more request each, sent
// once the list has answered, and only a rule that reaches them pays it. A call that reads the
// guest's status/current to show it (`at`: pve_get_vm_status) has its tags, name, status,
// qmpstatus, template, lock and kind from that read instead, where its rules reach no other fact
// but protection (its config, read beside it): the status read once, with the time the call
// gives it (as its qmpstatus read after the list has). Every other read shares one deadline.
// Each is kept for the rest of the call (PveClient.shared): what the person asked, or the
// preview, is shown of the guest (the blast radius) reuses it; a fresh read, after a person's
// answer, keeps nothing read before it. A guest missing from the list costs one more request
// (nextid: does it exist?): one the token may not see has its facts unread; one that does not
// exist too, unless the call needs none (a backup's deletion: then of no guest, or as its backup
// keeps it) or makes it (a restore). A call on a backup reads the backup's config where a rule
// reaches what it holds (extractconfig). A fact that cannot be read in time, or at all, is an
// Unread with the reason: the rules that reach it refuse the call (fail closed).

import { z } from 'zod';
import { fieldsNamed } from '../core/fields';
import { noSuchGuest, Unread } from '../policy/conditions';
import { tokenHolds, whyUnreadable } from './blast-radius';
import type { PveClient } from './client';
import { PveError } from './errors';
import { type GuestRef, guestPath, processStatus, type VmType } from './guest-state';
import { judgedTags } from './formats';
import {
  anyList,
  boolish,
  guestConfig,
  type GuestStatus,
  guestStatus,
  maybe,
  nextId,
  numeric,
  parseEach,
} from './schemas';

/** All the reads together may take this long; a fact still unread then is Unread. */
export const TARGET_FACTS_BUDGET_MS = 3_000;

/** Facts by TARGET_FIELDS name: a value, an Unread, or left out (the guest has none). */
export type TargetFacts = Record<string, unknown>;

/**
 * What the facts need of a guest's entry of the cluster's resources, and no more (not its load
 * figures): each call whose rules need the list checks its guest's entry against it.
 */
const vmEntry = z.object({
  vmid: numeric,
  type: z.enum(['qemu', 'lxc']),
  node: z.string(),
  ...fieldsNamed('name status pool tags lock hastate', maybe.text),
  template: maybe.flag(),
});
type VmEntry = z.output<typeof vmEntry>;

/**
 * The facts a guest's own status/current answers, and its config beside it (protection). Not its
 * node: Proxmox answers for a guest on the node that serves the API under the name `localhost`
 * too, so only the cluster's list says which node it is on.
 */
const OWN_FACTS: ReadonlySet<string> = new Set([
  'tags',
  'name',
  'vm_type',
  'status',
  'qmpstatus',
  'template',
  'lock',
  'protection',
]);

/**
 * The `wanted` facts of guest `vmid`: from its own status where the call reads that to show it
 * (`at`: where the call says the guest is) and it answers them all; else from the cluster's
 * resources (node-independent: found wherever it runs). A guest this server's API token cannot
 * see is read as no fact at all, never as a guest without tags. One that does not exist (its id
 * is free) has its facts unread too, unless the call needs none (`gone`: of no guest, or as its
 * backup, `archive`, keeps it) or makes a guest there (`absent`: the facts of the one it makes,
 * with its backup's). A backup beside an existing guest adds its tags to the guest's. `fresh`:
 * read again, after a person's answer; nothing the call read before is shared after it.
 */
export async function readTargetFacts(
  pve: PveClient,
  {
    vmid,
    absent,
    at,
    archive,
    gone,
  }: {
    vmid: number;
    absent?: Readonly<Record<string, unknown>>;
    at?: () => { node: string; vm_type: VmType };
    archive?: { node: string; volume: string };
    gone?: boolean;
  },
  wanted: ReadonlySet<string>,
  fresh = false,
): Promise<TargetFacts> {
  const deadline = pve.clock.now() + TARGET_FACTS_BUDGET_MS;
  const left = () => ({ timeoutMs: Math.max(1, deadline - pve.clock.now()) });
  const unread = (reason: string): TargetFacts =>
    Object.fromEntries([...wanted].map((fact) => [fact, new Unread(reason)]));
  if (fresh) pve.forgetShared();
  if (at && !absent && [...wanted].every((fact) => OWN_FACTS.has(fact)))
    return ownFacts(pve, { ...at(), vmid }, wanted, left, fresh, unread);
  let entry: VmEntry | undefined;
  try {
    const items = await pve.shared('/cluster/resources', anyList, { type: 'vm' }, left(), fresh);
    // Only the guest's own entry is checked against the schema, not every guest's.
    entry = parseEach(vmEntry, items.filter(isEntryOf(vmid)))[0];
  } catch (err) {
    return unread(`the cluster's resources: ${whyUnreadable(err)}`);
  }
  if (!entry) {
    // Not listed: no such guest, or one this server's API token may not see (Proxmox lists only
    // the guests a token may audit). Proxmox says which.
    const inUse = await idInUse(pve, vmid, left);
    // No guest has the id. A call that acts on one that must exist is refused, as Proxmox would
    // refuse it: a guest made at the id before the call is sent would not have been judged.
    if (inUse === false && !absent && !gone) return unread(`guest ${vmid} does not exist`);
    if (inUse === false) {
      // The guest a restore makes, or, for a call that needs none (a backup's deletion), the guest
      // as its backup kept it: what the backup's config holds.
      const kept = archive ? await archivedFacts(pve, archive, wanted, left) : {};
      return absent ? only({ ...absent, ...kept }, wanted) : noSuchGuest(only(kept, wanted));
    }
    const unseen = `guest ${vmid} is not among the cluster's resources this server's API token sees`;
    return unread(inUse === true ? `${unseen}, but its id is in use` : `${unseen}; ${inUse.why}`);
  }
  const guest = { node: entry.node, vm_type: entry.type, vmid };
  // A call on a backup of the guest touches both: its tags are judged with the backup's added. A
  // restore over the guest writes them into it (a prod backup restored over a lab guest makes a
  // prod copy); a backup of the guest from when it was prod is a prod backup still.
  const [pool, more, backedUp] = await Promise.all([
    wanted.has('pool') && entry.pool === undefined ? poolUnseen(pve, left, fresh) : null,
    extraFacts(pve, guest, wanted, left, fresh, shownThere(at, guest)),
    archive && wanted.has('tags') ? archivedFacts(pve, archive, new Set(['tags']), left) : null,
  ]);
  const facts: TargetFacts = {
    ...(entry.pool !== undefined ? { pool: entry.pool } : pool ? { pool } : {}),
    tags: withTags(judgedTags(entry.tags), backedUp?.tags),
    node: entry.node,
    vm_type: entry.type,
    // As rules judge it: a paused VM is running (its QEMU state is qmpstatus).
    ...(entry.status !== undefined ? { status: processStatus(entry.status) } : {}),
    ...(entry.lock !== undefined ? { lock: entry.lock } : {}),
    ...(entry.hastate !== undefined ? { ha: entry.hastate } : {}),
    ...statsFacts(entry),
    ...more,
  };
  return only(facts, wanted);
}

/**
 * The facts of a guest from its own status/current (and its config, for protection, read beside
 * it); its kind is the one the call names, which its answering confirms (Proxmox has no VM with
 * a container's id, nor the reverse).
 */
async function ownFacts(
  pve: PveClient,
  guest: GuestRef,
  wanted: ReadonlySet<string>,
  left: () => { timeoutMs: number },
  fresh: boolean,
  unread: (reason: string) => TargetFacts,
): Promise<TargetFacts> {
  const path = guestPath(guest, 'status', 'current');
  const besides = new Set([...wanted].filter((fact) => fact !== 'qmpstatus'));
  const [status, more] = await Promise.all([
    // The call's own read: given the time the call gives it, not the facts' budget.
    pve.shared(path, guestStatus, {}, {}, fresh).then(
      (answer): GuestStatus | { failed: unknown } => answer,
      (err: unknown) => ({ failed: err }),
    ),
    extraFacts(pve, guest, besides, left, fresh),
  ]);
  if ('failed' in status)
    return unread(
      `guest ${guest.vmid}'s status on node ${guest.node}: ${whyUnreadable(status.failed)}`,
    );
  const facts: TargetFacts = {
    tags: judgedTags(status.tags),
    vm_type: guest.vm_type,
    status: status.status,
    ...(guest.vm_type === 'qemu' && status.qmpstatus !== undefined
      ? { qmpstatus: status.qmpstatus }
      : {}),
    ...(status.lock !== undefined ? { lock: status.lock } : {}),
    // Proxmox sends the flag only for a template.
    template: status.template ?? false,
    ...(status.name !== undefined ? { name: status.name } : {}),
    ...more,
  };
  return only(facts, wanted);
}

/** The facts of a guest a backup's config sets (where a rule reaches one of them). */
const ARCHIVED: readonly string[] = ['tags', 'name', 'template'];

/**
 * The tags, name and template flag a backup's config holds (Proxmox's extractconfig: the config
 * file the archive keeps): the guest a restore makes, or the one a deleted backup was of, has
 * them; an existing guest has the tags added to its own. Each an Unread where it could not be
 * read; none read where no rule reaches them.
 */
async function archivedFacts(
  pve: PveClient,
  { node, volume }: { node: string; volume: string },
  wanted: ReadonlySet<string>,
  left: () => { timeoutMs: number },
): Promise<TargetFacts> {
  if (!ARCHIVED.some((fact) => wanted.has(fact))) return {};
  let config: Record<string, string>;
  try {
    const path = `/nodes/${encodeURIComponent(node)}/vzdump/extractconfig`;
    config = configFile(await pve.get(path, z.string(), { volume }, left()));
  } catch (err) {
    const why = new Unread(`the backup's config: ${whyUnreadable(err)}`);
    return Object.fromEntries(ARCHIVED.map((fact) => [fact, why]));
  }
  // A container's name is its hostname.
  const name = config.name ?? config.hostname;
  const template = config.template === undefined ? false : pveBoolean(config.template);
  return {
    tags: judgedTags(config.tags),
    template:
      template ??
      new Unread(`the backup's config: template ${JSON.stringify(config.template)} is no boolean`),
    ...(name !== undefined ? { name } : {}),
  };
}

/**
 * A guest's config as Proxmox reads its file (parse_vm_config): `key: value` lines, the value
 * without the spaces around it, the description as `#` lines, and a `[name]` section for each
 * snapshot and the pending changes after the guest's own keys (left out).
 */
function configFile(text: string): Record<string, string> {
  const config: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('[')) break;
    const m = /^([a-z][a-z0-9_-]*):\s*(.+?)\s*$/.exec(line);
    if (m) config[m[1]!] = m[2]!;
  }
  return config;
}

/** A boolean as PVE's schema parses one (1, on, yes, true; 0, off, no, false); else undefined. */
function pveBoolean(text: string): boolean | undefined {
  if (/^(?:1|on|yes|true)$/i.test(text)) return true;
  if (/^(?:0|off|no|false)$/i.test(text)) return false;
  return undefined;
}

/** A guest's tags with its backup's added (why they are unknown, if they are). */
function withTags(own: string[], restored: unknown): string[] | Unread {
  if (restored === undefined) return own;
  if (restored instanceof Unread) return restored;
  return [...new Set([...own, ...(restored as string[])])].sort();
}

/**
 * Whether guest `vmid` exists, wherever it is and whoever may see it: Proxmox answers nextid for
 * any token (`user: all`) from the cluster's own list of ids, and refuses an id in use ("VM 200
 * already exists"). An Unread where it did not say.
 */
async function idInUse(
  pve: PveClient,
  vmid: number,
  left: () => { timeoutMs: number },
): Promise<boolean | Unread> {
  try {
    const free = await pve.get('/cluster/nextid', nextId, { vmid }, left());
    return free === vmid
      ? false
      : new Unread(`whether guest ${vmid} exists: Proxmox offered id ${free} instead`);
  } catch (err) {
    if (
      err instanceof PveError &&
      err.failure.kind === 'invalid_parameters' &&
      /already exists/.test(err.failure.params.vmid ?? '')
    )
      return true;
    return new Unread(`whether guest ${vmid} exists: ${whyUnreadable(err)}`);
  }
}

/**
 * Whether the call shows the status of the guest as the list found it (`at`: the same node and
 * kind, so the same request): its status read is then the call's own.
 */
function shownThere(at: (() => { node: string; vm_type: VmType }) | undefined, guest: GuestRef) {
  if (!at) return false;
  const { node, vm_type } = at();
  return node === guest.node && vm_type === guest.vm_type;
}

/** Whether a raw resources entry is guest `vmid`'s (PVE sends the vmid as a number). */
const isEntryOf =
  (vmid: number) =>
  (item: unknown): boolean =>
    typeof item === 'object' && item !== null && Number((item as { vmid?: unknown }).vmid) === vmid;

function only(facts: Readonly<Record<string, unknown>>, wanted: ReadonlySet<string>): TargetFacts {
  return Object.fromEntries(Object.entries(facts).filter(([fact]) => wanted.has(fact)));
}

/**
 * Name and template come with the node's status data: a guest listed without them (its node
 * offline, or not reporting yet) has them unknown, not "no name" and "not a template".
 */
function statsFacts(entry: VmEntry): TargetFacts {
  if (entry.template === undefined) {
    const why = `its node ${entry.node} did not report it (status ${entry.status ?? 'unknown'})`;
    return { template: new Unread(why), name: new Unread(why) };
  }
  return { template: entry.template, ...(entry.name !== undefined ? { name: entry.name } : {}) };
}

/**
 * A guest listed without a pool is in none only if the token may see pools: Proxmox leaves the
 * pool out for a token without Pool.Audit. Null when it may; else why the pool is unknown.
 */
async function poolUnseen(
  pve: PveClient,
  left: () => { timeoutMs: number },
  fresh: boolean,
): Promise<Unread | null> {
  try {
    return (await tokenHolds(pve, '/pool', 'Pool.Audit', left(), fresh))
      ? null
      : new Unread("this server's API token may not see pools (Pool.Audit on /pool)");
  } catch (err) {
    return new Unread(`whether this server's API token may see pools: ${whyUnreadable(err)}`);
  }
}

/** qmpstatus (status/current) and protection (config), each read only when a rule reaches it. */
async function extraFacts(
  pve: PveClient,
  guest: GuestRef,
  wanted: ReadonlySet<string>,
  left: () => { timeoutMs: number },
  fresh: boolean,
  /** The status read is the one the call shows: it has the call's time, not the budget. */
  shown = false,
): Promise<TargetFacts> {
  const read = async <S extends z.ZodType>(
    fact: string,
    what: string,
    schema: S,
    pick: (answer: z.output<S>) => unknown,
  ) => {
    if (!wanted.has(fact)) return {};
    try {
      const path = guestPath(guest, ...what.split('/'));
      const time = shown && what === 'status/current' ? {} : left();
      const value = pick(await pve.shared(path, schema, {}, time, fresh));
      return value === undefined ? {} : { [fact]: value };
    } catch (err) {
      return { [fact]: new Unread(`${what.split('/').pop()}: ${whyUnreadable(err)}`) };
    }
  };
  const [qmp, protection] = await Promise.all([
    guest.vm_type === 'qemu'
      ? read('qmpstatus', 'status/current', guestStatus, (s) => s.qmpstatus)
      : {},
    read('protection', 'config', guestConfig, (c) =>
      c.protection === undefined ? false : boolish.parse(c.protection),
    ),
  ]);
  return { ...qmp, ...protection };
}
