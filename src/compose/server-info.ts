// Who this server is to an MCP client, in both eras: name, version, and the instructions that
// tell an agent the conventions every tool follows (said once here, not repeated per tool).

import { SERVER_NAME, VERSION } from '../core/version';

export const SERVER_INFO = { name: SERVER_NAME, title: 'Proxmox VE', version: VERSION };

export const INSTRUCTIONS = [
  'Proxmox VE tools. Reads (pve_get_*, pve_list_*, pve_guest_info, pve_guest_file_read) change nothing.',
  'Every write (power actions, snapshots, creating, cloning, changing, resizing, migrating and deleting guests, commands in guests, backups and restores, raw API writes) sends nothing without confirm: true:',
  "call it first without confirm to get a preview (the exact request, the guest's state and what the call would hit), show that to the user, and confirm only with their consent.",
  'Writes start Proxmox tasks: pass wait: true to wait for the end (at most timeout_s seconds), or follow the returned upid with pve_get_task_status.',
  'A failed call has isError and structuredContent.error {kind, message, fields?: [{field, message}], upstream_status?}.',
  'A tool outside the scopes the person granted this client is not listed; a call to one has error {kind: insufficient_scope, scope}: tell the user, who can reconnect the client and tick that scope.',
  'A refusal by the server policy has structuredContent.policy {decision: deny | limited | approval_required, rule, reason, retry_after_s?}.',
  '[APPROVAL REQUIRED] carries approval_id, approval_url and expires_at: give the user the link, and once they have approved call again with the same arguments and approval_id (every tool accepts it).',
].join(' ');
