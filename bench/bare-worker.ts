// The benchmark's bare Worker: one route, Proxmox GETs one after the other (with the same redirect
// and timeout settings as our client), nothing else: no MCP, no sign-in, no policy. What any
// Worker in front of Proxmox pays. `?gets=` names the GETs, in order, comma-separated: `list`
// (the cluster's guests, the GET pve_list_vms makes; the default) and `status` (guest 100's
// status/current on pve1, the GET pve_get_vm_status makes). So `list,list` minus `list` is what
// one more upstream GET costs a Worker, and `list,status` minus `status` what that GET costs made
// first, before the call's own, where a target rule's read is. Each GET's time, as the Worker's
// own clock (workerd's, in whole milliseconds) measures it, goes back in Server-Timing.

interface BareEnv {
  PVE_BASE_URL: string;
  PVE_TOKEN_ID: string;
  PVE_TOKEN_SECRET: string;
}

const PATHS: Readonly<Record<string, string>> = {
  list: '/cluster/resources?type=vm',
  status: '/nodes/pve1/qemu/100/status/current',
};

export default {
  async fetch(request: Request, env: BareEnv): Promise<Response> {
    const headers = new Headers({
      Authorization: `PVEAPIToken=${env.PVE_TOKEN_ID}=${env.PVE_TOKEN_SECRET}`,
      Accept: 'application/json',
    });
    const gets = (new URL(request.url).searchParams.get('gets') ?? 'list').split(',');
    if (!gets.every((get) => Object.hasOwn(PATHS, get)))
      return new Response(`gets: a comma-separated list of ${Object.keys(PATHS).join(', ')}`, {
        status: 400,
      });
    const timings: string[] = [];
    for (const [i, get] of gets.entries()) {
      const started = Date.now();
      const res = await fetch(`${env.PVE_BASE_URL}${PATHS[get]}`, {
        headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(15_000),
      });
      if (!res.ok) return new Response(`${get}: ${res.status}`, { status: 502 });
      await res.json();
      timings.push(`get${i + 1};dur=${Date.now() - started}`);
    }
    return Response.json({ gets }, { headers: { 'Server-Timing': timings.join(', ') } });
  },
};
