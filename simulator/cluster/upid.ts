// UPIDs as pve-common PVE::UPID encodes and decodes them:
// UPID:$node:$pid(%08X):$pstart(%08X, may grow to 9 digits):$starttime(%08X):$type:$id:$user:

export interface UpidParts {
  readonly node: string;
  readonly pid: number;
  readonly pstart: number;
  readonly starttime: number;
  readonly type: string;
  readonly id: string;
  readonly user: string;
}

const UPID_RE = new RegExp(
  '^UPID:([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):' +
    '([0-9A-Fa-f]{8}):([^:\\s/]+):([^:\\s/]*):([^:\\s/]+):$',
);

const hex8 = (value: number) => value.toString(16).toUpperCase().padStart(8, '0');

export function encodeUpid(parts: UpidParts): string {
  const { node, pid, pstart, starttime, type, id, user } = parts;
  return `UPID:${node}:${hex8(pid)}:${hex8(pstart)}:${hex8(starttime)}:${type}:${id}:${user}:`;
}

export function decodeUpid(upid: string): UpidParts | undefined {
  const match = UPID_RE.exec(upid);
  if (!match) return undefined;
  const [, node = '', , pid = '', pstart = '', starttime = '', type = '', id = '', user = ''] =
    match;
  return {
    node,
    pid: parseInt(pid, 16),
    pstart: parseInt(pstart, 16),
    starttime: parseInt(starttime, 16),
    type,
    id,
    user,
  };
}
