import { describe, expect, it } from 'vitest';
import {
  IDE_FORMAT,
  SCSI_FORMAT,
  parseAgent,
  parseBoot,
  parseCdrom,
  parseCpu,
  parseDrive,
  parseNet,
} from '../../src/proxmox/qemu-options';
import { encodeForm } from '../../src/proxmox/client';

describe('parseNet', () => {
  it.each([
    ['virtio,bridge=vmbr0', 'virtio,bridge=vmbr0', { model: 'virtio', bridge: 'vmbr0' }],
    [
      'model=e1000,bridge=vmbr1,firewall=on,tag=10',
      'e1000,bridge=vmbr1,firewall=1,tag=10',
      { model: 'e1000', firewall: true, tag: 10 },
    ],
    [
      'virtio=BC:24:11:00:00:01,bridge=vmbr0',
      'virtio,bridge=vmbr0,macaddr=BC:24:11:00:00:01',
      { model: 'virtio', macaddr: 'BC:24:11:00:00:01' },
    ],
    [
      'virtio,bridge=vmbr0,trunks=10;20-30,rate=12.5,mtu=9000,queues=4',
      'virtio,bridge=vmbr0,mtu=9000,queues=4,rate=12.5,trunks=10;20-30',
      { rate: 12.5 },
    ],
  ])('accepts %s', (input, text, fields) => {
    const r = parseNet(input);
    expect(r.ok && r.value.text).toBe(text);
    expect(r.ok && r.value.fields).toMatchObject(fields);
  });

  it.each([
    ['bridge=vmbr0', /NIC model is required/],
    ['virtio,bridge=vmbr0,foo=1', /unknown key "foo"/],
    ['virtio,bridge=vmbr0,bridge=vmbr1', /bridge is given twice/],
    ['virtio,virtio=BC:24:11:00:00:01', /model is given twice/],
    ['virtio,tag=0', /tag must be at least 1/],
    ['virtio,trunks=1;5000', /VLAN ids must be 1–4094/],
    ['virtio,bridge=this-bridge-is-too-long', /not a bridge name/],
    ['virtio,firewall=2', /firewall must be 1 or 0/],
    ['virtio,mtu=1e3', /mtu must be an integer/],
    ['virtio,,bridge=vmbr0', /empty entry/],
    ['virtio,bridge=', /bridge: empty value/],
  ])('refuses %s', (input, message) => {
    const r = parseNet(input);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(message);
  });
});

describe('parseDrive', () => {
  it.each([
    [
      'local-lvm:32',
      SCSI_FORMAT,
      'local-lvm:32',
      { storage: 'local-lvm', size_gib: 32, new_disk: true, iso: false },
    ],
    [
      'file=ceph-pool:0.5,ssd=yes,cache=none',
      SCSI_FORMAT,
      'ceph-pool:0.5,cache=none,ssd=1',
      { size_gib: 0.5, ssd: true },
    ],
    [
      'local-lvm:0,import-from=local:iso/cloud.qcow2',
      SCSI_FORMAT,
      'local-lvm:0,import-from=local:iso/cloud.qcow2',
      { size_gib: 0 },
    ],
    [
      'local:iso/debian.iso',
      IDE_FORMAT,
      'local:iso/debian.iso,media=cdrom',
      { iso: true, volume: 'local:iso/debian.iso', new_disk: false },
    ],
    ['none,media=cdrom', IDE_FORMAT, 'none,media=cdrom', { storage: '' }],
    [
      'local-lvm:vm-100-disk-0,bps_rd_length=2',
      SCSI_FORMAT,
      'local-lvm:vm-100-disk-0,bps_rd_max_length=2',
      {},
    ],
  ])('accepts %s', (input, format, text, fields) => {
    const r = parseDrive(input, format);
    expect(r.ok ? r.value.text : r.error).toBe(text);
    expect(r.ok && r.value.fields).toMatchObject(fields);
  });

  it.each([
    ['/dev/sda', /absolute paths are not allowed/],
    ['local:../../etc/shadow', /is not STORAGE:SIZE_GiB/],
    ['local:iso/../../x', /must not contain empty, "\." or "\.\." path segments/],
    ['local-lvm:0', /size 0 is only valid together with import-from/],
    ['local-lvm:32,import-from=local:iso/x.img', /import-from needs a new disk written STORAGE:0/],
    ['local-lvm:0,import-from=/etc/shadow', /import-from: must be an existing STORAGE:VOLUME/],
    ['local:iso/x.iso,media=disk', /ISO image must be attached with media=cdrom/],
    ['local-lvm:32,serial=a b', /not a URL-encoded serial/],
    ['local-lvm:32,wwn=0x12', /not a WWN/],
    ['local-lvm:99999999', /size must be at most 1048576 GiB/],
  ])('refuses %s', (input, message) => {
    const r = parseDrive(input, SCSI_FORMAT);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(message);
  });

  it('keeps SCSI-only and IDE-only keys apart', () => {
    expect(parseDrive('local-lvm:8,iothread=1', IDE_FORMAT).ok).toBe(false);
    expect(parseDrive('local-lvm:8,model=QEMU%20HD', SCSI_FORMAT).ok).toBe(false);
    expect(parseDrive('local-lvm:8,model=QEMU%20HD', IDE_FORMAT).ok).toBe(true);
  });
});

describe('parseAgent, parseBoot, parseCpu', () => {
  it.each([
    [parseAgent, '1', '1'],
    [
      parseAgent,
      'enabled=1,fstrim_cloned_disks=1,type=virtio',
      '1,fstrim_cloned_disks=1,type=virtio',
    ],
    [parseAgent, '1,freeze-fs-on-backup=0', '1,freeze-fs=0'],
    [parseBoot, 'order=scsi0;ide2;net0', 'order=scsi0;ide2;net0'],
    [parseCpu, 'host', 'host'],
    [
      parseCpu,
      'x86-64-v2-AES,flags=+aes;-pcid,hidden=1',
      'x86-64-v2-AES,flags=+aes;-pcid,hidden=1',
    ],
    [parseCpu, 'custom-mymodel,phys-bits=host', 'custom-mymodel,phys-bits=host'],
  ])('%o accepts %s', (parse, input, text) => {
    const r = parse(input);
    expect(r.ok ? r.value.text : r.error).toBe(text);
  });

  it.each([
    [parseAgent, 'fstrim_cloned_disks=1', /enabled \(1 or 0\) is required/],
    [parseBoot, 'cdn', /needs a key/],
    [parseBoot, 'order=scsi0;scsi0', /listed twice/],
    [parseBoot, 'order=scsi31', /not a boot device/],
    [parseCpu, 'host,flags=+vmx', /FLAG one of/],
    [parseCpu, 'host,reported-model=kvm64', /unknown key "reported-model"/],
    [parseCpu, 'ho st', /not a CPU model/],
  ])('%o refuses %s', (parse, input, message) => {
    const r = parse(input);
    expect(!r.ok && r.error).toMatch(message);
  });
});

describe('encodeForm', () => {
  it('writes booleans as 1/0 and percent-encodes the separators pveproxy splits on', () => {
    expect(
      encodeForm({
        start: true,
        template: false,
        boot: 'order=scsi0;net0',
        description: 'a&b c',
        skip: undefined,
      }),
    ).toBe('start=1&template=0&boot=order%3Dscsi0%3Bnet0&description=a%26b+c');
  });
});

describe('parseCdrom (ide2)', () => {
  it.each([
    ['local:iso/debian.iso', 'local:iso/debian.iso,media=cdrom'],
    ['none', 'none,media=cdrom'],
    ['cdrom,media=cdrom', 'cdrom,media=cdrom'],
  ])('accepts %s', (input, text) => {
    const r = parseCdrom(input);
    expect(r.ok ? r.value.text : r.error).toBe(text);
  });

  it.each([
    ['local-lvm:4000', /only a CD-ROM goes here/],
    ['local-lvm:vm-100-disk-0', /only a CD-ROM goes here/],
    ['local-lvm:0,import-from=local-lvm:vm-100-disk-0', /only a CD-ROM goes here/],
    ['none,media=disk', /needs media=cdrom/],
  ])('refuses a disk: %s', (input, message) => {
    const r = parseCdrom(input);
    expect(!r.ok && r.error).toMatch(message);
  });
});
