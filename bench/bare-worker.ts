// The benchmark's bare Worker: one route, one Proxmox GET (the same one pve_list_vms makes, with
// the same redirect and timeout settings as our client), nothing else: no MCP, no sign-in, no
// policy. What any Worker in front of Proxmox pays. `?gets=2` makes the GET twice, one after the
// other: the difference is what one more upstream GET costs a Worker. Each GET's time, as the
// Worker's own clock (workerd's, in whole milliseconds) measures it, goes back in Server-Timing.

interface BareEnv {
  PVE_BASE_URL: string;
  PVE_TOKEN_ID: string;
  PVE_TOKEN_SECRET: string;
}

export default {
  async fetch(request: Request, env: BareEnv): Promise<Response> {
    const headers = new Headers({
      Authorization: `PVEAPIToken=${env.PVE_TOKEN_ID}=${env.PVE_TOKEN_SECRET}`,
      Accept: 'application/json',
    });
    const gets = new URL(request.url).searchParams.get('gets') === '2' ? 2 : 1;
    let guests = 0;
    const timings: string[] = [];
    for (let i = 0; i < gets; i++) {
      const started = Date.now();
      const res = await fetch(`${env.PVE_BASE_URL}/cluster/resources?type=vm`, {
        headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(15_000),
      });
      guests = ((await res.json()) as { data: unknown[] }).data.length;
      timings.push(`get${i + 1};dur=${Date.now() - started}`);
    }
    return Response.json({ guests }, { headers: { 'Server-Timing': timings.join(', ') } });
  },
};
