// check_vm_modify_config_perm of qemu-server: which privilege changing (or deleting) each VM option
// needs. Drives, cdrom, unused/serial/usb/hostpci/virtiofs and tags are checked elsewhere by
// value; options in no group (args, lock, affinity, ...) are root@pam's alone.
import { check, checkVmPerm } from '../access/permissions.ts';
import type { Identity } from '../access/tokens.ts';
import { isQemuDriveKey } from '../cluster/guest-config.ts';
import { dieError } from '../schema/pve-error.ts';

const GROUPS: readonly (readonly [RegExp, readonly string[], boolean?])[] = [
  [/^(cores|cpu|runningcpu|cpulimit|cpuunits|numa\d*|smp|sockets|vcpus)$/, ['VM.Config.CPU']],
  [/^(memory|balloon|shares|allow-ksm)$/, ['VM.Config.Memory']],
  [
    /^(acpi|hotplug|kvm|machine|runningmachine|scsihw|smbios1|tablet|vga|watchdog|audio0|rng0)$/,
    ['VM.Config.HWType'],
  ],
  [
    /^(agent|autostart|bios|description|keyboard|localtime|migrate_downtime|migrate_speed|name|onboot|ostype|protection|reboot|startdate|startup|tdf|template)$/,
    ['VM.Config.Options'],
  ],
  [/^freeze$/, ['VM.PowerMgmt']],
  [/^(boot|bootdisk|vmstatestorage)$/, ['VM.Config.Disk']],
  [/^(net\d+|running-nets-host-mtu)$/, ['VM.Config.Network']],
  [
    /^(cicustom|cipassword|citype|ciuser|ciupgrade|nameserver|searchdomain|sshkeys|ipconfig\d+)$/,
    ['VM.Config.Cloudinit', 'VM.Config.Network'],
    true,
  ],
  [/^vmstate$/, ['VM.Config.Disk', 'VM.PowerMgmt']],
];

export function checkVmOptionPerms(
  identity: Identity,
  vmid: number,
  keys: readonly string[],
): void {
  for (const key of keys) {
    if (isQemuDriveKey(key) || key === 'cdrom' || key === 'tags') continue;
    if (/^(unused|serial|usb|hostpci|virtiofs)\d+$/.test(key)) continue;
    const group = GROUPS.find(([re]) => re.test(key));
    if (!group) throw dieError(`only root can set '${key}' config`);
    checkVmPerm(identity, vmid, group[1], group[2] === true);
    // startup changes how the host boots its guests
    if (key === 'startup') check(identity, '/', ['Sys.Modify']);
  }
}
