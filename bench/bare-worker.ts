// The benchmark's floor for a Worker: a bare route that only makes the same Proxmox GET as
// pve_list_vms (GET /cluster/resources?type=vm, with the API token) and answers its JSON. No MCP,
// no OAuth, no policy, no audit: what any Worker in front of Proxmox pays.

interface BareEnv {
  PVE_BASE_URL: string;
  PVE_TOKEN_ID: string;
  PVE_TOKEN_SECRET: string;
}

export default {
  async fetch(_request: Request, env: BareEnv): Promise<Response> {
    const res = await fetch(`${env.PVE_BASE_URL}/cluster/resources?type=vm`, {
      headers: { Authorization: `PVEAPIToken=${env.PVE_TOKEN_ID}=${env.PVE_TOKEN_SECRET}`, Accept: 'application/json' },
    });
    const body = (await res.json()) as { data: unknown[] };
    return Response.json({ guests: body.data.length }, { status: res.ok ? 200 : 502 });
  },
};
