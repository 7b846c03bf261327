// How every text names a guest: "VM 104", "container 110", with its name when known
// ("VM 104 (win11-lab)"). Tool messages, previews, approval titles and pages use this one. Pure.

export function guestName(vmType: string, vmid: number | string, name?: string | null): string {
  return `${vmType === 'lxc' ? 'container' : 'VM'} ${vmid}${name ? ` (${name})` : ''}`;
}
