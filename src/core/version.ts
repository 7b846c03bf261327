import pkg from '../../package.json';

export const VERSION: string = pkg.version;
export const SERVER_NAME = 'proxmox-mcp';
