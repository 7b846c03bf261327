// What a write says before it is confirmed, worded here once for every write tool: that nothing
// happened yet, and the one step that carries the call out.

/** The first line of every write's preview. */
export const NOTHING_SENT = 'Preview only: nothing was sent to Proxmox.';

/** The first line of a command's preview (nothing was run inside the guest). */
export const NOTHING_RUN = 'Preview only: nothing was run.';

/**
 * The step that carries the call out: the same call with confirm: true (and `also`, an argument
 * to add, such as the id a preview chose: " and vmid: 106").
 */
export function nextStep(tool: string, doing: string, also = ''): string {
  return `Call ${tool} again with the same arguments${also} and confirm: true to ${doing}.`;
}
