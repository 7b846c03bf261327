// vzdump and backup volumes over HTTP: POST /nodes/{node}/vzdump to a directory storage and to
// PBS (archive names, format, notes from the template, protection, the task log, pruning), its
// refusals (before the task and inside it), the guest's lock and run state around a backup, and
// GET/DELETE /nodes/{node}/storage/{storage}/content/{volume}.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import {
  expectError,
  getData,
  runTask,
  type SimClient,
  useSimulator,
  waitTask,
} from '../support/sim-harness.ts';

const client = useSimulator('backup');
const audit = { token: SIMULATOR_TOKENS.audit };

type Item = Record<string, unknown>;

const backups = (c: SimClient, node: string, storage: string, vmid: number) =>
  getData<Item[]>(c, `/nodes/${node}/storage/${storage}/content`, { content: 'backup', vmid });

/** The backups a call added (by volid). */
function added(before: Item[], after: Item[]): Item[] {
  const old = new Set(before.map((i) => i.volid));
  return after.filter((i) => !old.has(i.volid));
}

describe('vzdump to a directory storage', () => {
  it('backs up a running VM into backup/vzdump-qemu-<id>-<time>.vma.zst, with notes and protection', async () => {
    const c = client();
    const before = await backups(c, 'pve1', 'local', 100);
    const res = await c.api('POST', '/nodes/pve1/vzdump', {
      form: {
        vmid: 100,
        storage: 'local',
        compress: 'zstd',
        mode: 'snapshot',
        'notes-template': '{{guestname}} ({{vmid}}) on {{node}}, {{cluster}}',
        protected: 1,
      },
    });
    expect(res.body.data).toMatch(
      /^UPID:pve1:[0-9A-F]{8}:[0-9A-F]{8,9}:[0-9A-F]{8}:vzdump:100:root@pam!mcp:$/,
    );
    const end = await waitTask(c, res.body.data);
    expect(end.exitstatus).toBe('OK');
    const [volume] = added(before, await backups(c, 'pve1', 'local', 100));
    expect(volume).toEqual({
      volid: expect.stringMatching(
        /^local:backup\/vzdump-qemu-100-\d{4}_\d\d_\d\d-\d\d_\d\d_\d\d\.vma\.zst$/,
      ),
      content: 'backup',
      format: 'vma.zst',
      size: expect.any(Number),
      ctime: expect.any(Number),
      vmid: 100,
      subtype: 'qemu',
      notes: 'web01 (100) on pve1, pve-sim',
      protected: 1,
    });
    const file = String(volume?.volid).replace('local:backup/', '');
    expect(end.log).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^INFO: starting new backup job: vzdump 100 --compress zstd --mode snapshot --node pve1 --notes-template '\{\{guestname\}\} .*' --protected 1 --storage local$/,
        ),
        'INFO: Starting Backup of VM 100 (qemu)',
        'INFO: status = running',
        'INFO: VM Name: web01',
        "INFO: include disk 'scsi0' 'local-lvm:vm-100-disk-0' 32G",
        'INFO: backup mode: snapshot',
        `INFO: creating vzdump archive '/var/lib/vz/dump/${file}'`,
        "INFO: issuing guest-agent 'fs-freeze' command",
        'INFO: adding notes to backup',
        'INFO: marking backup as protected',
        'INFO: Backup job finished successfully',
      ]),
    );
    // the archive's time names it: ctime is the backup's start
    const [, y, mo, d, h, mi, s] = /(\d{4})_(\d\d)_(\d\d)-(\d\d)_(\d\d)_(\d\d)/.exec(file) ?? [];
    expect(volume?.ctime).toBe(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) / 1000);
  });

  it('locks the guest while the task runs and unlocks it after', async () => {
    const c = client();
    await c.configure({ taskDurationMs: 300 });
    const res = await c.api('POST', '/nodes/pve1/vzdump', {
      form: { vmid: 100, storage: 'local' },
    });
    expect((await c.guest(100)).lock).toBe('backup');
    expectError(
      await c.api('PUT', '/nodes/pve1/qemu/100/config', { form: { description: 'x' } }),
      500,
      'VM is locked (backup)',
    );
    await waitTask(c, res.body.data);
    expect((await c.guest(100)).lock).toBeNull();
  });

  it('backs up a running container in stop mode: stops it, then starts it again', async () => {
    const c = client();
    const uptime = async () =>
      (await getData<Item>(c, '/nodes/pve1/lxc/110/status/current')).uptime as number;
    expect(await uptime()).toBeGreaterThan(1000);
    const end = await runTask(c, 'POST', '/nodes/pve1/vzdump', {
      vmid: 110,
      storage: 'local',
      mode: 'stop',
    });
    expect(end.exitstatus).toBe('OK');
    expect(end.log).toEqual(
      expect.arrayContaining([
        'INFO: backup mode: stop',
        'INFO: stopping virtual guest',
        'INFO: restarting vm',
      ]),
    );
    const guest = await c.guest(110);
    expect([guest.status, guest.lock]).toEqual(['running', null]);
    expect(await uptime()).toBeLessThan(5);
    const tars = (await backups(c, 'pve1', 'local', 110)).filter((i) => i.format === 'tar');
    expect(tars).toHaveLength(1);
  });

  it('backs up a stopped VM in stop mode whatever was asked, and it stays stopped', async () => {
    const c = client();
    const end = await runTask(c, 'POST', '/nodes/pve3/vzdump', {
      vmid: 300,
      storage: 'local',
      compress: 'lzo',
    });
    expect(end.log).toEqual(
      expect.arrayContaining([
        'INFO: status = stopped',
        'INFO: backup mode: stop',
        'INFO: starting kvm to execute backup task',
        'INFO: stopping kvm after backup task',
      ]),
    );
    expect((await c.guest(300)).status).toBe('stopped');
    const [item] = await backups(c, 'pve3', 'local', 300);
    expect(item).toMatchObject({ format: 'vma.lzo', vmid: 300, subtype: 'qemu' });
    expect(item).not.toHaveProperty('notes');
  });
});

describe('vzdump to Proxmox Backup Server', () => {
  it('creates backup/vm/<id>/<UTC time> (pbs-vm) and prunes by the storage retention', async () => {
    const c = client();
    const before = await backups(c, 'pve2', 'pbs-backup', 120);
    const end = await runTask(c, 'POST', '/nodes/pve2/vzdump', {
      vmid: 120,
      storage: 'pbs-backup',
      'notes-template': '{{guestname}}',
    });
    expect(end.exitstatus).toBe('OK');
    const after = await backups(c, 'pve2', 'pbs-backup', 120);
    const [volume] = added(before, after);
    expect(volume).toMatchObject({
      volid: expect.stringMatching(/^pbs-backup:backup\/vm\/120\/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      format: 'pbs-vm',
      subtype: 'qemu',
      notes: 'files01',
    });
    expect(end.log).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^INFO: creating Proxmox Backup Server archive 'vm\/120\/.*Z'$/),
        'INFO: scsi0: dirty-bitmap status: created new',
        'INFO: prune older backups with retention: keep-daily=7, keep-weekly=4',
        "INFO: running 'proxmox-backup-client prune' for 'vm/120'",
        'INFO: pruned 0 backup(s)',
      ]),
    );
    // the same on every node: PBS is shared
    expect((await backups(c, 'pve1', 'pbs-backup', 120)).length).toBe(after.length);
  });

  it('prunes an older backup of the same day that the retention no longer keeps', async () => {
    const c = client();
    const before = await backups(c, 'pve1', 'pbs-backup', 100);
    expect(before).toHaveLength(1);
    const end = await runTask(c, 'POST', '/nodes/pve1/vzdump', {
      vmid: 100,
      storage: 'pbs-backup',
    });
    expect(end.log).toContain('INFO: pruned 1 backup(s) not covered by keep-retention policy');
    const after = await backups(c, 'pve1', 'pbs-backup', 100);
    expect(after).toHaveLength(1);
    expect(after[0]?.volid).not.toBe(before[0]?.volid);
  });

  it('backs up a container to ct/<id>/<time> (pbs-ct)', async () => {
    const c = client();
    const end = await runTask(c, 'POST', '/nodes/pve1/vzdump', {
      vmid: 110,
      storage: 'pbs-backup',
      remove: 0,
    });
    expect(end.exitstatus).toBe('OK');
    expect(end.log).not.toContain("INFO: running 'proxmox-backup-client prune' for 'ct/110'");
    const items = await backups(c, 'pve1', 'pbs-backup', 110);
    expect(items.map((i) => i.format)).toEqual(['pbs-ct', 'pbs-ct']);
  });
});

describe('vzdump refusals', () => {
  it('answers "OK" and starts nothing for a guest on another node', async () => {
    const c = client();
    const res = await c.api('POST', '/nodes/pve1/vzdump', {
      form: { vmid: 200, storage: 'local' },
    });
    expect([res.status, res.body.data]).toEqual([200, 'OK']);
  });

  it('checks its parameters: vmid or all/pool, conflicts, the notes template', async () => {
    const c = client();
    const post = (form: Record<string, string | number>) =>
      c.api('POST', '/nodes/pve1/vzdump', { form });
    expectError(await post({ storage: 'local' }), 400, { vmid: 'property is missing' });
    expectError(await post({ vmid: 100, all: 1 }), 400, {
      all: "option conflicts with option 'vmid'",
    });
    expectError(await post({ vmid: 100, 'notes-template': 'x' }), 400, {
      storage: "missing property required by 'notes-template'",
    });
    expectError(
      await post({ vmid: 100, storage: 'local', 'notes-template': '{{name}} \\t' }),
      400,
      {
        // Perl's pos() after the match, minus the name's length: 4, not where '{{' starts
        'notes-template':
          "found unknown: escape sequence '\\t' at char 9, variable 'name' at char 4\n",
      },
    );
    expectError(await post({ vmid: 100, storage: 'local', mode: 'fast' }), 400, {
      mode: "value 'fast' does not have a value in the enumeration 'snapshot, suspend, stop'",
    });
    expectError(await post({ vmid: 100, stdout: 1 }), 400, {
      stdout: 'option is only allowed on the command line interface.',
    });
    expectError(await post({ vmid: 100, tmpdir: '/tmp' }), 400, {
      tmpdir: 'Only root may set this option.',
    });
  });

  it('fails the task for a storage without backup content', async () => {
    const end = await runTask(client(), 'POST', '/nodes/pve1/vzdump', {
      vmid: 100,
      storage: 'local-lvm',
    });
    expect(end.exitstatus).toBe(
      "could not get storage information for 'local-lvm': can't use storage 'local-lvm' for backups - wrong content type",
    );
  });

  it('logs a guest that does not exist or is locked, and ends with "job errors"', async () => {
    const c = client();
    const missing = await runTask(c, 'POST', '/nodes/pve1/vzdump', { vmid: 999, storage: 'local' });
    expect(missing.exitstatus).toBe('job errors');
    expect(missing.log).toContain("ERROR: Backup of VM 999 failed - unable to find VM '999'");
    await c.setLock(101, 'snapshot');
    const locked = await runTask(c, 'POST', '/nodes/pve1/vzdump', {
      vmid: '100,101',
      storage: 'local',
    });
    expect(locked.exitstatus).toBe('job errors');
    expect(locked.log).toContain('ERROR: Backup of VM 101 failed - VM is locked (snapshot)');
    expect(locked.log).toContain('INFO: Finished Backup of VM 100 (00:00:00)');
    // one task for several guests has no id in its UPID
    expect(String(locked.status.id)).toBe('');
  });

  it('refuses stop mode for a started HA resource', async () => {
    const end = await runTask(client(), 'POST', '/nodes/pve2/vzdump', {
      vmid: 120,
      storage: 'local',
      mode: 'stop',
    });
    expect(end.log).toContain(
      'ERROR: Backup of VM 120 failed - Cannot execute a backup with stop mode on a HA managed and enabled Service. Use snapshot mode or disable the Service.',
    );
  });

  it('needs Datastore.AllocateSpace on the storage', async () => {
    expectError(
      await client().api('POST', '/nodes/pve1/vzdump', {
        form: { vmid: 100, storage: 'local' },
        ...audit,
      }),
      403,
      'Permission check failed (/storage/local, Datastore.AllocateSpace)',
    );
  });
});

describe('backup volumes: GET and DELETE content/{volume}', () => {
  const content = (node: string, storage: string, volid: string) =>
    `/nodes/${node}/storage/${storage}/content/${volid}`;

  it('shows a backup with its notes and protection, by volid or by name', async () => {
    const c = client();
    const [item] = (await backups(c, 'pve1', 'local', 100)).filter((i) => i.protected);
    const volid = String(item?.volid);
    const info = await getData<Item>(c, content('pve1', 'local', volid));
    expect(info).toEqual({
      path: `/var/lib/vz/dump/${volid.replace('local:backup/', '')}`,
      size: item?.size,
      used: item?.size,
      format: 'raw',
      notes: 'weekly, before kernel 6.14',
      protected: 1,
    });
    expect(await getData(c, content('pve1', 'local', encodeURIComponent(volid.slice(6))))).toEqual(
      info,
    );
    expectError(await c.api('GET', content('pve1', 'local-lvm', volid)), 400, {
      volume: 'storage ID mismatch (local != local-lvm)\n',
    });
    const [pbs] = await backups(c, 'pve1', 'pbs-backup', 100);
    expect(await getData(c, content('pve1', 'pbs-backup', String(pbs?.volid)))).toMatchObject({
      path: expect.stringMatching(/^pbs:\/\/pve-sync@pbs!pve@10\.10\.0\.50:store1\/vm\/100\//),
      format: 'pbs-vm',
      notes: 'web01',
      protected: false,
    });
  });

  it('deletes an unprotected backup in an imgdel task', async () => {
    const c = client();
    const [item] = (await backups(c, 'pve1', 'local', 100)).filter((i) => !i.protected);
    const volid = String(item?.volid);
    const res = await c.api('DELETE', content('pve1', 'local', volid));
    expect(res.body.data).toMatch(/:imgdel:100@local:root@pam!mcp:$/);
    const end = await waitTask(c, res.body.data);
    expect([end.exitstatus, end.log]).toEqual(['OK', [`Removed volume '${volid}'`, 'TASK OK']]);
    expect((await backups(c, 'pve1', 'local', 100)).map((i) => i.volid)).not.toContain(volid);
  });

  it('refuses a protected backup in the task, as the storage plugins do', async () => {
    const c = client();
    const [local] = (await backups(c, 'pve1', 'local', 100)).filter((i) => i.protected);
    const end = await runTask(c, 'DELETE', content('pve1', 'local', String(local?.volid)));
    const name = String(local?.volid).replace('local:', '');
    expect(end.exitstatus).toBe(`cannot remove protected volume '${name}' on 'local'`);
    const [pbs] = (await backups(c, 'pve2', 'pbs-backup', 120)).filter((i) => i.protected);
    const pbsEnd = await runTask(c, 'DELETE', content('pve2', 'pbs-backup', String(pbs?.volid)));
    expect(pbsEnd.exitstatus).toBe(
      'proxmox-backup-client failed: Error: cannot remove protected snapshot',
    );
    expect(await backups(c, 'pve1', 'local', 100)).toContainEqual(local);
  });

  it('waits for the task with delay: null when done, the error otherwise', async () => {
    const c = client();
    const items = await backups(c, 'pve1', 'local', 100);
    const [plain, kept] = [items.find((i) => !i.protected), items.find((i) => i.protected)];
    const ok = await c.api('DELETE', content('pve1', 'local', String(plain?.volid)), {
      query: { delay: 5 },
    });
    expect([ok.status, ok.body.data]).toEqual([200, null]);
    expectError(
      await c.api('DELETE', content('pve1', 'local', String(kept?.volid)), { query: { delay: 5 } }),
      500,
      `cannot remove protected volume '${String(kept?.volid).replace('local:', '')}' on 'local'`,
    );
  });

  it('needs Datastore.AllocateSpace and VM.Backup (or Datastore.Allocate)', async () => {
    const c = client();
    const [item] = await backups(c, 'pve1', 'local', 100);
    expectError(
      await c.api('DELETE', content('pve1', 'local', String(item?.volid)), audit),
      403,
      'Permission check failed (/storage/local, Datastore.AllocateSpace)',
    );
    expectError(
      await c.api('DELETE', content('pve1', 'local', 'iso/debian-12.7.0-amd64-netinst.iso'), audit),
      403,
      'Permission check failed (/storage/local, Datastore.Allocate)',
    );
    expectError(
      await c.api('GET', content('pve1', 'local', String(item?.volid)), audit),
      403,
      'Permission check failed (/storage/local, Datastore.AllocateSpace)',
    );
  });
});

describe('GET /nodes/{node}/vzdump/extractconfig', () => {
  const extract = (c: SimClient, node: string, volume: string, options = {}) =>
    c.api('GET', `/nodes/${node}/vzdump/extractconfig`, { query: { volume }, ...options });

  it("answers the config a backup holds as its file's text: description as # lines, keys sorted", async () => {
    const c = client();
    // Tagged and described after the backup was taken: the backup keeps the config as it was.
    const [item] = await backups(c, 'pve1', 'local', 100);
    const volid = String(item?.volid);
    const set = await c.api('PUT', '/nodes/pve1/qemu/100/config', {
      form: { tags: 'changed', description: 'first\nsecond' },
    });
    expect(set.status).toBe(200);
    const res = await extract(c, 'pve1', volid);
    expect(res.status, res.text).toBe(200);
    const text = res.body.data as string;
    const lines = text.split('\n');
    expect(lines.at(-1)).toBe('');
    const keys = lines.filter((l) => l && !l.startsWith('#')).map((l) => l.split(':')[0]!);
    expect(keys).toEqual([...keys].sort());
    expect(lines).toContain('name: web01');
    expect(lines).toContain('tags: prod;web');
    expect(text).not.toContain('changed');
    // A backup of a guest as it is now carries its description and new tags.
    const made = await c.api('POST', '/nodes/pve1/vzdump', {
      form: { vmid: 100, storage: 'local' },
    });
    expect((await waitTask(c, made.body.data as string)).exitstatus).toBe('OK');
    const newest = (await backups(c, 'pve1', 'local', 100)).at(-1);
    const now = (await extract(c, 'pve1', String(newest?.volid))).body.data as string;
    expect(now.startsWith('#first\n#second\n')).toBe(true);
    expect(now.split('\n')).toContain('tags: changed');
  });

  it('needs Datastore.AllocateSpace and VM.Backup; a volume not on the node is no file', async () => {
    const c = client();
    const [item] = await backups(c, 'pve1', 'local', 100);
    expectError(
      await extract(c, 'pve1', String(item?.volid), audit),
      403,
      'Permission check failed (/storage/local, Datastore.AllocateSpace)',
    );
    // local is each node's own: pve2 has no such file.
    const res = await extract(c, 'pve2', String(item?.volid));
    expect(res.status).toBe(500);
    expect(res.body.message).toMatch(/^unable to open file '.*' - No such file or directory\n$/);
  });
});
