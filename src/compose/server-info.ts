// Who this server is to an MCP client, in both eras: name, version, and the instructions that
// tell an agent the conventions every tool follows (said once here, not repeated per tool).

import { SERVER_NAME, VERSION } from '../version';

export const SERVER_INFO = { name: SERVER_NAME, title: 'Proxmox VE', version: VERSION };

export const INSTRUCTIONS = [
  'Proxmox VE tools. Reads (pve_get_*, pve_list_*) change nothing.',
  'Every write (start, shutdown, stop, reboot, suspend, resume, snapshots, create) sends nothing without confirm: true:',
  "call it first without confirm to get the exact request and the guest's state, show that to the user, and confirm only with their consent.",
  'Writes start Proxmox tasks: pass wait: true to wait for the end, or follow the returned upid with pve_get_task_status.',
  'A failed call has isError and structuredContent.error {kind, message, fields?: [{field, message}], upstream_status?}.',
  'A refusal by the server policy has structuredContent.policy {decision: deny | limited | approval_required, rule, reason, retry_after_s?}.',
  '[APPROVAL REQUIRED] carries approval_id and approval_url: give the user the link, and once they have approved call again with the same arguments and approval_id.',
].join(' ');
