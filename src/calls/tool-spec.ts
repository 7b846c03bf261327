// What a tool is, independent of any MCP server class: name, schemas, hints and a handler that
// gets validated arguments and a context. Tools and policy depend on this file only.

import { z } from 'zod';
import type { Clock } from '../clock';
import type { Identity } from '../core/identity';
import type { BlastRadius } from '../proxmox/blast-radius';
import type { PveClient } from '../proxmox/client';
import type { VmType } from '../proxmox/guest-state';
import type { Scope } from '../core/scopes';

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
}

/** What every step of a call may use: who calls, and the Proxmox client. */
export interface BaseToolContext {
  readonly requestId: string;
  readonly identity: Identity;
  /** The time: deadlines of `wait` and of the steps of a plan. */
  readonly clock: Clock;
  /** The Proxmox client for this call; throws a `config` ToolFailure when not configured. */
  pve(): PveClient;
  /** The clusters the server reaches, the default first (one: `cluster` is no argument). */
  readonly clusters: readonly string[];
  /** The cluster the call names (its `cluster` argument); null when it names none. */
  readonly cluster: string | null;
  /** A client of `cluster` for this call (a list over every cluster); as pve() when not configured. */
  pveAt(cluster: string): PveClient;
}

export interface ToolContext extends BaseToolContext {
  /** Arguments the server filled in before the policy decided (see ToolSpec.resolve). */
  readonly filled: readonly string[];
  /**
   * Asks the policy again about changed arguments (e.g. another vmid after a collision), before
   * a new request goes out; throws a PolicyRefusal when it would not allow them. `cluster`: as
   * a call to that cluster (a list over every cluster asks for each).
   */
  recheck(args: Record<string, unknown>, cluster?: string): void;
  /**
   * With a person's approval: throws a PolicyRefusal unless these are the requests (as
   * describeCall's rows) the person was shown. An approval covers what its approver saw.
   */
  checkApproved(requests: Record<string, string> | null): void;
}

/** The policy refused arguments a tool was about to use (see ToolContext.recheck). */
export class PolicyRefusal extends Error {
  override readonly name = 'PolicyRefusal';
  constructor(
    readonly rule: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** What `resolve` returns: the arguments as they will be used, and which ones it filled in. */
export interface Resolved<A> {
  args: A;
  filled: readonly string[];
  /**
   * What the new guest takes from its source where the call leaves an argument out (a clone's
   * memory, cores, NIC), and what only the source can tell (its sockets, its disks together):
   * the policy and the approver see these beside the arguments, nothing sends them.
   */
  inherited?: Readonly<Record<string, unknown>>;
}

/**
 * What a call acts on, for `target.` rules: the guest with this id (`absent`: the facts when no
 * guest has it, for a call that then makes one, as a restore does; without it such a guest's facts
 * are not known), or a guest the call makes.
 */
export type CallTarget =
  | {
      vmid: number;
      absent?: Readonly<Record<string, unknown>>;
      /**
       * Where the call says the guest is, as the requests it sends name it, for a call that reads
       * the guest's status to show it: its facts then come from that read (asked only when they
       * are read; ../proxmox/target-facts.ts).
       */
      at?: () => { node: string; vm_type: VmType };
      /**
       * The call acts on what a guest leaves behind (its backup), so the guest need not exist:
       * with no guest at the id, its facts are none, or those `archive` keeps. Without it, a call
       * on a guest that does not exist has its facts unread (Proxmox would refuse it anyway).
       */
      gone?: boolean;
      /**
       * A backup of the guest the call acts on: where there is no guest at the id, the guest a
       * restore makes (`absent`), or the one a deleted backup was of (`gone`), has the tags, name
       * and template flag its config holds; where there is, the backup's tags are added to the
       * guest's. Read from it only when a rule reaches those facts.
       */
      archive?: { node: string; volume: string };
    }
  | { made: Readonly<Record<string, unknown>>; vmid?: number };

export interface ToolSuccess<S> {
  structured: S;
  text: string;
  /** A result that is not a fault of the call but still failed (e.g. a task that ended in error). */
  isError?: boolean;
}

export interface ToolSpec<
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodObject = z.ZodObject,
> {
  name: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** The OAuth scope a token needs for this tool (../core/scopes.ts): outside it, nothing is sent. */
  scope: Scope;
  /** True when this call only reads or previews: rate limits then take no slot. */
  dryRun?(args: z.output<I>): boolean;
  /**
   * Named no cluster among several, it reads every cluster (tools/read/each-cluster.ts), its rows
   * marked with theirs; any other call is to one cluster, which its result names.
   */
  acrossClusters?: boolean;
  /**
   * Reads (never writes) that fill in arguments the caller left to the server, such as the next
   * free vmid, before the policy decides: rules, approvals and the approver's page then see the
   * values that will be used.
   */
  resolve?(args: z.output<I>, ctx: BaseToolContext): Promise<Resolved<z.output<I>>>;
  /** The arguments `resolve` may fill in (for `policy explain`, which cannot read Proxmox). */
  fills?: readonly string[];
  /**
   * What `resolve` may report as inherited, by name, with the fields rules may reach (null: none):
   * arguments of the tool, or names that are not (`sockets`), which rules may then use too.
   */
  inherits?: Readonly<Record<string, readonly string[] | null>>;
  /**
   * Names `inherits` gained after calls were first recorded: a record that keeps one neither
   * there nor among its arguments was made before the server read it, and a replay has it
   * unknown (not "the source has none").
   */
  newlyInherited?: readonly string[];
  /** For property-string arguments: the fields policy rules may reach into (args.net0.bridge). */
  policyFields?: Readonly<Record<string, readonly string[]>>;
  /**
   * Arguments a person must read to judge the call: what it runs, writes or reads (exec's
   * command and stdin, a file's path, a raw request's path and parameters, a config, the SSH keys
   * a new guest lets in). A person cannot approve what they cannot see: when the policy hides one
   * of them whole (`sensitive`) or a value inside one, a value inside one is content the built-in
   * list hides (`params.data`), or one is shown cut, the call is refused instead of asked for
   * (../audit/hidden-fields.ts); only a built-in credential inside one (`config.cipassword`) is
   * listed as hidden to the person asked.
   */
  judgedBy?: readonly string[];
  /**
   * The guest the call acts on, whose facts the policy's `target.` rules reach: an existing guest
   * by id (read from Proxmox before the policy decides, when a rule reaches a fact of it), or a
   * new guest as the call would make it. Absent, or null: the call acts on no guest.
   */
  target?(args: z.output<I>): CallTarget | null;
  /**
   * The guest the call acts on is always the one it makes (a create): its `target.` facts are
   * only those a guest has before it exists (NEW_FIELDS), never its status, lock or HA state.
   */
  targetsWhatItMakes?: boolean;
  /**
   * The guest the call makes beside the one it acts on (a clone's new guest), as the call would
   * make it, for the policy's `new.` rules: from its arguments, and what `resolve` read it takes
   * from its source (`inherited`: empty where nothing was read). Absent, or null: it makes none.
   */
  makes?(
    args: z.output<I>,
    inherited: Readonly<Record<string, unknown>>,
  ): Readonly<Record<string, unknown>> | null;
  /**
   * The exact requests this call would send, one row per request and parameter, for the person
   * asked to approve it (null: not known before running). Write tools have it from their plan
   * (../writes/kernel.ts), which may read Proxmox.
   */
  describeCall?(
    args: z.output<I>,
    ctx: BaseToolContext & { readonly filled: readonly string[] },
  ): Promise<Record<string, string> | null>;
  /**
   * What the call would hit (the guest's state, HA, replication, backups...), read for the
   * person asked to approve it. Never throws: a fact it cannot read is named as unreadable.
   */
  blastRadius?(args: z.output<I>, ctx: BaseToolContext): Promise<BlastRadius | null>;
  run(args: z.output<I>, ctx: ToolContext): Promise<ToolSuccess<z.input<O>>>;
}

/** Keeps the handler's argument type tied to the input schema. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  spec: ToolSpec<I, O>,
): ToolSpec<I, O> {
  return spec;
}

/**
 * What a read tool declares: a title, not annotations; its scope unless it is pve:read; its
 * input unless it takes no arguments.
 */
export type ReadToolSpec<I extends z.ZodObject, O extends z.ZodObject> = Omit<
  ToolSpec<I, O>,
  'annotations' | 'scope' | 'input'
> & { title: string; scope?: Scope; input?: I };

type NoArguments = z.ZodObject<Record<string, never>, z.core.$strict>;

const madeAsRead = new WeakSet<ToolSpec>();

/** Whether defineReadTool made this tool. */
export function madeAsReadTool(tool: ToolSpec): boolean {
  return madeAsRead.has(tool);
}

/** A tool that only reads: its annotations say so (read-only, and no world beyond Proxmox). */
export function defineReadTool<
  I extends z.ZodObject = NoArguments,
  O extends z.ZodObject = z.ZodObject,
>({
  title,
  scope = 'pve:read',
  input = z.strictObject({}) as z.ZodObject as I,
  ...spec
}: ReadToolSpec<I, O>): ToolSpec<I, O> {
  const annotations = { title, readOnlyHint: true, openWorldHint: false };
  const made: ToolSpec<I, O> = { ...spec, input, scope, annotations };
  madeAsRead.add(made as unknown as ToolSpec);
  return made;
}

/**
 * `indeterminate`: a write may or may not have happened (its answer was lost). Whatever the kind,
 * a call that sent a write keeps its rate-limit slot and its approval (see run-call.ts).
 */
export type FailureKind =
  | 'invalid_arguments'
  | 'config'
  | 'conflict'
  | 'upstream'
  | 'indeterminate'
  | 'unavailable'
  | 'internal';

/** A failure a tool reports on purpose; anything else thrown is reported as `internal`. */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly fields: readonly { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}
