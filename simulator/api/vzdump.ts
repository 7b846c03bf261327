// POST /nodes/{node}/vzdump (pve-manager API2/VZDump.pm): user => 'all', then the handler's own
// checks in PVE's order: CLI-only and root-only options, Sys.Modify for bwlimit/ionice/
// performance, Datastore.Allocate for prune-backups, verify_vzdump_parameters (conflicts, the
// notes template), the guests to back up (vmid list, pool, or all minus exclude) of which only
// this node's count; none here answers the plain string "OK" and starts nothing. Then
// Datastore.AllocateSpace on the storage and a `vzdump` task (see vzdump-task.ts); VM.Backup is
// checked inside the task, as exec_backup does.
import { ALL_USERS, check } from '../access/permissions.ts';
import { notesTemplateError } from '../cluster/backups.ts';
import { splitList } from '../schema/formats.ts';
import { parsePropertyString } from '../schema/schema-check.ts';
import { BACKUP_FLEECING_FORMAT } from '../schema/backup-formats.ts';
import { dieError, paramError } from '../schema/pve-error.ts';
import type { KeySchema, PropSchema } from '../schema/schema-types.ts';
import { asStrings, requestNode } from './guest-helpers.ts';
import { NODE_PARAM, optional, type HandlerContext, type Route } from './handler-context.ts';
import { archiveVolume, checkBackupAccess } from './restore-common.ts';
import { spawnVzdumpTask } from './vzdump-task.ts';

const perlTrue = (value: string | undefined) =>
  value !== undefined && value !== '' && value !== '0';

/** get_included_guests: the guests the job names, split into this node's and unknown ones. */
function includedGuests(ctx: HandlerContext, p: Record<string, string>): number[] {
  const { state } = ctx;
  let vmids: number[];
  if (p.pool) {
    vmids = [...state.guests.values()].filter((g) => g.pool === p.pool).map((g) => g.vmid);
  } else if (p.vmid) {
    vmids = splitList(p.vmid).map(Number);
  } else if (perlTrue(p.all)) {
    const exclude = new Set(splitList(p.exclude ?? '').map(Number));
    vmids = [...state.guests.keys()].filter((id) => !exclude.has(id));
  } else {
    return [];
  }
  const node = String(ctx.params.node);
  // guests on other nodes are left out (the job names this node); unknown ones fail visibly later
  return [...new Set(vmids)]
    .filter((id) => {
      const guest = state.guests.get(id);
      return guest === undefined || guest.node === node;
    })
    .sort((a, b) => a - b);
}

function vzdump(ctx: HandlerContext): unknown {
  const { identity } = ctx;
  const node = requestNode(ctx);
  const p = asStrings(ctx.params);
  if (perlTrue(p.stdout)) {
    throw paramError({ stdout: 'option is only allowed on the command line interface.' });
  }
  // assert_param_permission_vzdump (an API token is never root@pam)
  for (const key of ['tmpdir', 'dumpdir', 'script', 'job-id']) {
    if (p[key] !== undefined) throw paramError({ [key]: 'Only root may set this option.' });
  }
  if (['bwlimit', 'ionice', 'performance'].some((key) => p[key] !== undefined)) {
    check(identity, '/', ['Sys.Modify']);
  }
  if (perlTrue(p.fleecing)) {
    const fleecing = parsePropertyString(BACKUP_FLEECING_FORMAT, p.fleecing ?? '', 'fleecing');
    if (fleecing.storage) {
      check(identity, `/storage/${fleecing.storage}`, ['Datastore.AllocateSpace']);
    }
  }
  const storeid = p.storage || 'local';
  if (p['prune-backups'] !== undefined) {
    check(identity, `/storage/${storeid}`, ['Datastore.Allocate']);
  }
  // verify_vzdump_parameters
  if (perlTrue(p.all) && p.vmid) throw paramError({ all: "option conflicts with option 'vmid'" });
  if (p.exclude && p.vmid) throw paramError({ exclude: "option conflicts with option 'vmid'" });
  if (p.pool && p.vmid) throw paramError({ pool: "option conflicts with option 'vmid'" });
  const template = p['notes-template'];
  if (template) {
    const error = notesTemplateError(template);
    if (error) throw paramError({ 'notes-template': error });
  }
  if (p.exclude !== undefined && !p.pool) p.all = '1';
  if (!(perlTrue(p.all) || perlTrue(p.stop) || p.pool) && !p.vmid) {
    throw paramError({ vmid: 'property is missing' });
  }
  const vmids = includedGuests(ctx, p);
  if (perlTrue(p.stop)) {
    check(identity, `/nodes/${node.name}`, ['Sys.Modify']);
    if (vmids.length === 0) return 'OK';
  }
  // silent exit if the guests named run on other nodes
  if (vmids.length === 0 && !perlTrue(p.all)) return 'OK';
  check(identity, `/storage/${storeid}`, ['Datastore.AllocateSpace']);
  return spawnVzdumpTask(ctx, node, vmids, p);
}

const opt = (type: PropSchema['type'], extra: Omit<PropSchema, 'type'> = {}): PropSchema => ({
  type,
  optional: true,
  ...extra,
});

/** PVE 9.1.3's vzdump parameters (VZDump::Common json_config_properties plus job-id, stdout). */
const VZDUMP_SCHEMA: Readonly<Record<string, KeySchema>> = {
  node: optional(NODE_PARAM),
  all: opt('boolean'),
  bwlimit: opt('integer', { minimum: 0 }),
  compress: opt('string', { enum: ['0', '1', 'gzip', 'lzo', 'zstd'] }),
  dumpdir: opt('string'),
  exclude: opt('string', { format: 'pve-vmid-list' }),
  'exclude-path': opt('array', { items: { type: 'string' } }),
  fleecing: opt('string', { format: 'backup-fleecing' }),
  ionice: opt('integer', { minimum: 0, maximum: 8 }),
  'job-id': opt('string', { maxLength: 50, pattern: '\\S+' }),
  lockwait: opt('integer', { minimum: 0 }),
  mailnotification: opt('string', { enum: ['always', 'failure'] }),
  mailto: opt('string', { format: 'email-or-username-list' }),
  maxfiles: opt('integer', { minimum: 1 }),
  mode: opt('string', { enum: ['snapshot', 'suspend', 'stop'] }),
  'notes-template': opt('string', { maxLength: 1024, requires: 'storage' }),
  'notification-mode': opt('string', {
    enum: ['auto', 'legacy-sendmail', 'notification-system'],
  }),
  'pbs-change-detection-mode': opt('string', { enum: ['legacy', 'data', 'metadata'] }),
  performance: opt('string', { format: 'backup-performance' }),
  pigz: opt('integer'),
  pool: opt('string'),
  protected: opt('boolean', { requires: 'storage' }),
  'prune-backups': opt('string', { format: 'prune-backups' }),
  quiet: opt('boolean'),
  remove: opt('boolean'),
  script: opt('string'),
  stdexcludes: opt('boolean'),
  stdout: opt('boolean'),
  stop: opt('boolean'),
  stopwait: opt('integer', { minimum: 0 }),
  storage: opt('string', { format: 'pve-storage-id' }),
  tmpdir: opt('string'),
  vmid: opt('string', { format: 'pve-vmid-list' }),
  zstd: opt('integer'),
};

/**
 * GET /nodes/{node}/vzdump/extractconfig: the config a backup holds, as the archive keeps its
 * file (qemu-server.conf, pct.conf): the description as `#` lines, then each key, sorted, as
 * PVE writes a guest's config. check_volume_access with no vmid: Datastore.AllocateSpace on the
 * storage and VM.Backup on the guest it is of, unless Datastore.Allocate.
 */
function extractConfig(ctx: HandlerContext): unknown {
  const node = requestNode(ctx);
  const volume = String(ctx.params.volume ?? '');
  const archive = checkBackupAccess(ctx, undefined, volume);
  const found = archiveVolume(ctx, archive, node.name);
  if (!found) throw dieError(`unable to open file '${archive.path}' - No such file or directory`);
  const { description, ...config } = found.backupConfig ?? {};
  const comments = description === undefined ? [] : String(description).split('\n');
  return [
    ...comments.map((line) => `#${line}\n`),
    ...Object.keys(config)
      .sort()
      .map((key) => `${key}: ${config[key]}\n`),
  ].join('');
}

export const VZDUMP_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/nodes/{node}/vzdump',
    permissions: ALL_USERS,
    schema: VZDUMP_SCHEMA,
    handle: vzdump,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/vzdump/extractconfig',
    permissions: ALL_USERS,
    schema: { node: NODE_PARAM, volume: { type: 'string' } },
    handle: extractConfig,
  },
];
