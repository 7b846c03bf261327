// Names that exist in the simulator's seeded cluster.
export const ISO = 'local:iso/debian-12.7.0-amd64-netinst.iso';
