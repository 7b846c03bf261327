// What the policy saw of a recorded call, rebuilt from its audit record. The record keeps the
// arguments as shown (property strings as their canonical text, server-filled ones included), so
// each is parsed again with the tool's own schema (args.net0.bridge works again); what the call
// inherited goes under them, as run-call.ts's seenBy puts it. What the record does not hold
// (redacted, cut, not stored, or no longer parsing) becomes an UnknownValue, never a guess; inside
// an object argument only the key that lost its value does (params.site-secret).

import type { z } from 'zod';
import { NOT_STORED_TOO_DEEP, REDACTED, wasCut } from '../audit/canonical';
import { INHERITED_KEY, TARGET_KEY, UNREAD_PREFIX } from '../audit/record';
import { own } from '../core/own';
import { SCRUBBED } from '../secrets/scrub';
import { NEW_FIELDS, UNRECORDED_TARGET, Unread } from '../policy/conditions';
import { UnknownReached, UnknownValue } from '../policy/unknown';
import { policyView } from '../policy/view';
import { processStatus } from '../proxmox/guest-state';

export interface RecordedCall {
  /** The arguments as the policy saw them: policyView(seenBy(args, inherited)). */
  view: Record<string, unknown>;
  /** The facts of its guest the record keeps (TARGET_KEY), when it keeps any. */
  facts?: Readonly<Record<string, unknown>>;
  /**
   * The parsed arguments, for the tool's dryRun: reading one the record lost throws
   * UnknownReached (inside an object argument, a lost key is simply not there).
   */
  args: Record<string, unknown>;
  /**
   * What the call took from its source (`(inherited)`), parsed; one the record lost, or a name
   * the tool takes now that the record does not keep, an UnknownValue.
   */
  inherited: Record<string, unknown>;
}

/** How a tool names the guest a call acts on (ToolSpec.target, in calls/tool-spec.ts). */
export type TargetOf = (
  args: Record<string, unknown>,
) => { vmid: number } | { made: Readonly<Record<string, unknown>>; vmid?: number } | null;

/** How a tool names the guest a call makes beside the one it acts on (ToolSpec.makes). */
export type MakesOf = (
  args: Record<string, unknown>,
  inherited: Readonly<Record<string, unknown>>,
) => Readonly<Record<string, unknown>> | null;

/**
 * The guest a recorded call made, as its recorded arguments and what it inherited say (a lost
 * argument unknown: every fact then; a lost inherited value, that fact); undefined when it made
 * none.
 */
export function recordedMade(
  makesOf: MakesOf | undefined,
  args: Record<string, unknown>,
  inherited: Readonly<Record<string, unknown>> = {},
): Readonly<Record<string, unknown>> | undefined {
  try {
    return makesOf?.(args, inherited) ?? undefined;
  } catch (err) {
    if (!(err instanceof UnknownReached)) throw err;
    return Object.fromEntries(
      NEW_FIELDS.map((fact) => [fact, new UnknownValue(`new.${fact}`, err.unknown.why)]),
    );
  }
}

/** The cluster a record's stored arguments name (they do where the server reached several). */
export function clusterOf(stored: Readonly<Record<string, unknown>>): { cluster?: string } {
  return typeof stored.cluster === 'string' ? { cluster: stored.cluster } : {};
}

/** The id of the guest a recorded call acted on (or made), for `guest` limits; undefined if lost. */
export function recordedGuest(
  targetOf: TargetOf | undefined,
  args: Record<string, unknown>,
): number | undefined {
  try {
    return targetOf?.(args)?.vmid;
  } catch (err) {
    if (err instanceof UnknownReached) return undefined;
    throw err;
  }
}

/**
 * The guest a recorded call acted on (or made), from its stored arguments read back with the
 * tool's `input`; undefined when it acted on none, or the record lost what names it.
 */
export function guestOfRecord(
  tool: { input: z.ZodObject; target?: TargetOf } | undefined,
  stored: Readonly<Record<string, unknown>>,
): number | undefined {
  return tool ? recordedGuest(tool.target, recordedCall(stored, tool.input).args) : undefined;
}

/**
 * What a recorded call's `target.` rules can know of its guest: a guest the call made is its
 * arguments (a lost one unknown); a guest that existed, the facts its record keeps (those its
 * policy read), any other unknown (UNRECORDED_TARGET); no target when the call acted on none.
 * `cluster`: the one the call was for (target.cluster).
 */
export function recordedTarget(
  targetOf: TargetOf | undefined,
  args: Record<string, unknown>,
  facts?: Readonly<Record<string, unknown>>,
  cluster?: string,
): Readonly<Record<string, unknown>> | undefined {
  const target = targetOfRecord(targetOf, args, facts);
  // The cluster the call was for is known from the record, whatever else it kept.
  return target && cluster !== undefined ? { ...target, cluster } : target;
}

function targetOfRecord(
  targetOf: TargetOf | undefined,
  args: Record<string, unknown>,
  facts?: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> | undefined {
  if (!targetOf) return undefined;
  let target: ReturnType<TargetOf>;
  try {
    target = targetOf(args);
  } catch (err) {
    if (err instanceof UnknownReached) return UNRECORDED_TARGET;
    throw err;
  }
  if (!target) return undefined;
  if ('made' in target) return target.made;
  if (!facts) return UNRECORDED_TARGET;
  const out: Record<string, unknown> = { ...UNRECORDED_TARGET };
  for (const [fact, value] of Object.entries(facts)) {
    if (!Object.hasOwn(UNRECORDED_TARGET, fact)) continue;
    // Read, and the guest has none: missing, as it was when the call was judged.
    if (value === null) delete out[fact];
    else if (typeof value === 'string' && value.startsWith(UNREAD_PREFIX))
      out[fact] = new Unread(value.slice(UNREAD_PREFIX.length));
    // A status as rules judge it now: one stored from the cluster's list before it was said as
    // the process's may be a VM's QEMU state (paused), and that VM was running.
    else if (fact === 'status' && typeof value === 'string' && !lossesIn(value, []).length)
      out[fact] = processStatus(value);
    else if (!lossesIn(value, []).length) out[fact] = value;
    // A fact the trail redacted, scrubbed or cut stays unknown.
  }
  return out;
}

/**
 * `input` null: the server offers the tool no more, so none of its arguments can be read back.
 * `inherits`: what the tool takes from its source now (ToolSpec.inherits): a name with fields is
 * a property string, read back with the argument's schema; any other value is read back as it
 * was stored (the source's, never the caller's: a name Proxmox made need not be one a caller may
 * give). `newlyInherited` (ToolSpec.newlyInherited): names a record may predate.
 */
export function recordedCall(
  stored: Readonly<Record<string, unknown>>,
  input: z.ZodObject | null,
  inherits: Readonly<Record<string, readonly string[] | null>> = {},
  newlyInherited: readonly string[] = [],
): RecordedCall {
  const view: Record<string, unknown> = {};
  const args: Record<string, unknown> = {};
  const took: Record<string, unknown> = {};
  // A whole `(inherited)` replaced by a marker comes only with a whole call's arguments replaced
  // (invalid policy, nested too deep): such records never reached a policy and are not replayed.
  const inherited = own(stored, INHERITED_KEY);
  const kept = isRecord(inherited) ? inherited : {};
  for (const [key, value] of Object.entries(kept)) {
    const back = readBack(key, value, input, own(inherits, key) !== null);
    put(view, key, back.view);
    put(took, key, back.view instanceof UnknownValue ? back.view : back.parsed);
  }
  // What the record keeps neither there nor among its arguments: unknown, not "the source has
  // none". Without `(inherited)`, the server read nothing (the call was refused first, or made
  // before it read a source): every name. With it, the names the server began to keep later; the
  // others it kept whenever it read them (a source without a NIC leaves none).
  const unkept = isRecord(inherited) ? newlyInherited : Object.keys(inherits);
  for (const key of unkept) {
    if (key in kept || own(stored, key) !== undefined) continue;
    const lost = new UnknownValue(`args.${key}`, 'the record does not keep what it inherited');
    put(view, key, lost);
    put(took, key, lost);
  }
  for (const [key, value] of Object.entries(stored)) {
    if (key === INHERITED_KEY || key === TARGET_KEY) continue;
    const back = readBack(key, value, input);
    put(view, key, back.view);
    if (back.view instanceof UnknownValue) {
      const lost = back.view;
      Object.defineProperty(args, key, {
        enumerable: true,
        get: () => {
          throw new UnknownReached('(preview)', lost);
        },
      });
    } else put(args, key, back.parsed);
  }
  const facts = keptFacts(stored);
  return { view, args, inherited: took, ...(facts ? { facts } : {}) };
}

/** The facts of its guest a record's arguments keep (TARGET_KEY), as stored; none: undefined. */
export function keptFacts(stored: Record<string, unknown>): Record<string, unknown> | undefined {
  const facts = own(stored, TARGET_KEY);
  return isRecord(facts) ? facts : undefined;
}

/** One argument back: its policy view (an UnknownValue when lost) and its parsed value. */
function readBack(
  key: string,
  value: unknown,
  input: z.ZodObject | null,
  parse = true,
): { view: unknown; parsed?: unknown } {
  const field = `args.${key}`;
  if (!input) return { view: new UnknownValue(field, 'the server offers this tool no more') };
  const losses = lossesIn(value, []);
  const whole = losses.find((loss) => loss.path.length === 0);
  if (whole) return { view: new UnknownValue(field, whole.why) };
  // Names the tool does not take (a clone's inherited sockets, disk_gib) were stored as seen.
  const schema: z.ZodType | undefined = parse ? own(input.shape, key) : undefined;
  let parsed = strip(value, losses);
  if (schema) {
    const result = schema.safeParse(parsed);
    if (!result.success)
      return { view: new UnknownValue(field, `does not parse as ${key} is taken now`) };
    parsed = result.data;
  }
  let view = policyView({ [key]: parsed })[key];
  for (const { path, why } of losses) {
    const next = overlay(view, path, new UnknownValue(`${field}.${path.join('.')}`, why));
    // The schema made something else of the object: nothing in it can be placed.
    if (next === null) return { view: new UnknownValue(field, why) };
    view = next;
  }
  return { view, parsed };
}

/** Where the audit trail lost a value, and how. */
interface Loss {
  path: readonly string[];
  why: string;
}

function lossOf(text: string): string | null {
  // Whole, or a sensitive argument's value removed from inside it (../calls/run-call.ts).
  if (text.includes(REDACTED)) return 'redacted in the audit trail';
  if (text.includes(SCRUBBED)) return 'a secret was removed from it in the audit trail';
  if (wasCut(text)) return 'cut in the audit trail';
  if (text === NOT_STORED_TOO_DEEP) return 'not stored: nested too deep';
  return null;
}

/** The losses inside a stored value; a list with one counts as lost whole (rules see no items). */
function lossesIn(value: unknown, path: readonly string[]): Loss[] {
  if (typeof value === 'string') {
    const why = lossOf(value);
    return why ? [{ path, why }] : [];
  }
  if (Array.isArray(value)) {
    const inner = value.flatMap((item) => lossesIn(item, path));
    return inner[0] ? [{ path, why: inner[0].why }] : [];
  }
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([key, item]) => lossesIn(item, [...path, key]));
}

/** The value without its lost keys, so that a marker is never parsed as if it were the value. */
function strip(value: unknown, losses: readonly Loss[]): unknown {
  if (!losses.length || !isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const below = losses.filter((loss) => loss.path[0] === key);
    if (below.some((loss) => loss.path.length === 1)) continue;
    put(
      out,
      key,
      strip(
        item,
        below.map((loss) => ({ ...loss, path: loss.path.slice(1) })),
      ),
    );
  }
  return out;
}

/** A copy of `view` with `value` at `path`, or null when the path does not lead into objects. */
function overlay(view: unknown, path: readonly string[], value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (!isRecord(view)) return null;
  const inner = rest.length ? overlay(own(view, head), rest, value) : value;
  if (inner === null) return null;
  const out = { ...view };
  put(out, head, inner);
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** defineProperty: a stored key named __proto__ stays a plain entry. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
