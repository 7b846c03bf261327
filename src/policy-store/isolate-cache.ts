// The policy in force on this isolate, read from the policy store (./policy-store.ts) and kept
// for a moment: a version confirmed less than FRESH_MS ago is served as is; one confirmed less
// than MAX_AGE_MS ago is served while a check runs in the background; an older one is never
// served: the call waits for the store. So a change reaches every isolate within MAX_AGE_MS
// (plus one store round trip), and no isolate goes back to an older generation (answers are
// taken in generation order only). A store that does not answer within its deadline leaves an
// isolate whose last confirmation is older than MAX_AGE_MS without a policy: calls are refused,
// with the reason, until it answers again (fail closed). A change made through this isolate is
// asked for at once by every source on it (the Worker's and its Durable Objects' where they share
// the isolate), not after FRESH_MS.

import { errorText, logLine } from '../log';
import type { Clock } from '../clock';
import { sha256Hex } from '../encoding';
import { STORE_DEADLINE_MS } from '../stores/deadline';
import type { ToolCatalog } from '../policy/load';
import type { ActivePolicy, PolicyOrigin } from '../policy/source';
import { type CheckedPolicy, checkPolicyText } from '../policy/text';
import type { PolicyHead, PolicyVersionRef } from './types';

/** Served without a check. */
export const FRESH_MS = 1_500;
/** Served while a check runs in the background; past it, a call waits for the store. */
export const MAX_AGE_MS = 4_000;

export interface PolicyHeadPort {
  head(
    deployed: { sha256: string; text?: string },
    known: number | null,
    now: number,
  ): Promise<PolicyHead>;
}

export interface PolicySource {
  /**
   * The policy in force. `waitUntil` keeps a background check alive past the response.
   */
  active(waitUntil?: (work: Promise<unknown>) => void): Promise<ActivePolicy>;
  /** Why the store refused the deployed policy, as of the last check (null: it did not). */
  deployRefused(): string[] | null;
  /** After a change made through this isolate: every source on it asks the store first. */
  forget(): void;
}

interface Held {
  generation: number;
  active: ActivePolicy;
  confirmedAt: number;
  /** The isolate's count of changes when the check that confirmed it was asked. */
  changes: number;
}

// Changes made through this isolate (forget): a confirmation asked before the latest confirms
// nothing, whichever source on the isolate holds it. A count, not a time: sources may run on
// clocks of their own.
let changesHere = 0;

export function storedPolicySource(options: {
  store: () => PolicyHeadPort;
  deployed: { origin: PolicyOrigin; text: string };
  clock: Clock;
  catalog: ToolCatalog;
}): PolicySource {
  const { deployed, clock, catalog } = options;
  let held: Held | null = null;
  let deployRefused: string[] | null = null;
  // One hash of the deployed text for every check, also for checks that start together: they
  // then go on in the order they started (two digests could finish in either order).
  let deployedSha: Promise<string> | undefined;
  // When the last background check began: one at a time is enough. Its promise is never shared:
  // workerd does not let one request wait on I/O another request started (it would hang).
  let backgroundSince = -Infinity;
  const checked = textChecker(catalog);
  const resolve = (head: PolicyHead): ActivePolicy =>
    policyOfHead(head, deployed, catalog, checked);

  const check = async (): Promise<Held> => {
    const asked = clock.now();
    const changes = changesHere;
    // The deployed policy goes as its hash (its text only when the store asks for it); the
    // versions' texts come only when the generation is new to this isolate.
    deployedSha ??= sha256Hex(deployed.text);
    const sha256 = await deployedSha;
    const store = options.store();
    const known = held?.generation ?? null;
    let head = await store.head({ sha256 }, known, asked);
    if (head.needsDeployText)
      head = await store.head({ sha256, text: deployed.text }, known, asked);
    if (head.deployProblems && !deployRefused)
      logLine('error', 'policy_deploy_refused', {
        origin: deployed.origin,
        problems: head.deployProblems.join('\n').slice(0, 2000),
      });
    deployRefused = head.deployProblems ?? null;
    // An answer older than what is held (a slow check overtaken) never replaces it.
    if (held && head.generation < held.generation) return held;
    const next: Held = {
      generation: head.generation,
      active: held?.generation === head.generation ? held.active : resolve(head),
      confirmedAt: asked,
      changes,
    };
    held = next;
    return next;
  };

  return {
    deployRefused: () => deployRefused,
    forget: () => {
      changesHere++;
    },
    async active(waitUntil) {
      const now = clock.now();
      const age = held && held.changes === changesHere ? now - held.confirmedAt : Infinity;
      if (held && age < FRESH_MS) return held.active;
      if (held && age < MAX_AGE_MS) {
        if (waitUntil && now - backgroundSince > STORE_DEADLINE_MS) {
          backgroundSince = now;
          waitUntil(
            check().then(
              () => {
                backgroundSince = -Infinity;
              },
              (err: unknown) => {
                logLine('error', 'policy_check_failed', { error: errorText(err, 200) });
              },
            ),
          );
        }
        return held.active;
      }
      try {
        return (await check()).active;
      } catch (err) {
        logLine('error', 'policy_store_unavailable', { error: errorText(err, 200) });
        return {
          ok: false,
          unavailable: true,
          origin: deployed.origin,
          version: held?.active.version ?? null,
          sha256: held?.active.sha256 ?? null,
          errors: [
            {
              pointer: '',
              message: `the policy store did not answer (${errorText(err, 120)}), so this server cannot tell which policy is in force`,
            },
          ],
          text: '',
        };
      }
    },
  };
}

type Checked = (sha256: string, text: string) => CheckedPolicy;

/** Checks texts by hash: an activation back and forth checks each text once. */
function textChecker(catalog: ToolCatalog): Checked {
  const checkedTexts = new Map<string, CheckedPolicy>();
  return (sha256, text) => {
    let result = checkedTexts.get(sha256);
    if (!result) {
      result = checkPolicyText(text, catalog);
      checkedTexts.set(sha256, result);
      if (checkedTexts.size > 8) checkedTexts.delete(checkedTexts.keys().next().value!);
    }
    return result;
  };
}

/** The policy of a new generation (the store sends the texts whenever the generation is new). */
function policyOfHead(
  head: PolicyHead,
  deployed: { origin: PolicyOrigin; text: string },
  catalog: ToolCatalog,
  checked: Checked,
): ActivePolicy {
  if (!head.active) {
    // No stored version: the store refused the deployed policy, and holds nothing else.
    const deployedCheck = checkPolicyText(deployed.text, catalog);
    return {
      origin: deployed.origin,
      version: null,
      sha256: null,
      ok: false,
      text: deployed.text,
      errors: deployedCheck.ok
        ? [{ pointer: '', message: 'the policy store holds no version' }]
        : deployedCheck.errors,
    };
  }
  const active = versionPolicy(head.active, deployed.origin, checked);
  if (!active.ok || !head.shadow) return active;
  const shadow = versionPolicy(head.shadow, deployed.origin, checked);
  return shadow.ok
    ? { ...active, shadow: { version: shadow.version!, policy: shadow.policy } }
    : active;
}

function versionPolicy(
  ref: PolicyVersionRef,
  origin: PolicyOrigin,
  checked: Checked,
): ActivePolicy {
  const tag = { origin, version: ref.version, sha256: ref.sha256 };
  if (ref.text === undefined)
    return {
      ...tag,
      ok: false,
      text: '',
      errors: [{ pointer: '', message: 'the policy store sent no text' }],
    };
  const result = checked(ref.sha256, ref.text);
  // A stored version this release's tools no longer accept (a tool renamed since) cannot
  // decide: every call is denied with its errors.
  return result.ok
    ? { ...tag, ok: true, policy: result.policy, text: ref.text }
    : { ...tag, ok: false, errors: result.errors, text: ref.text };
}
