interface BareEnv { PVE_BASE_URL: string; PVE_TOKEN_ID: string; PVE_TOKEN_SECRET: string; }
export default {
  async fetch(request: Request, env: BareEnv): Promise<Response> {
    const v = new URL(request.url).pathname;
    const headers = new Headers({ Authorization: `PVEAPIToken=${env.PVE_TOKEN_ID}=${env.PVE_TOKEN_SECRET}`, Accept: 'application/json' });
    const init: RequestInit = v === '/plain' ? { headers } : { headers, redirect: 'manual', signal: AbortSignal.timeout(15000) };
    const res = await fetch(`${env.PVE_BASE_URL}/cluster/resources?type=vm`, init);
    let body: { data: unknown[] };
    if (v === '/reader') {
      const reader = res.body!.getReader(); const dec = new TextDecoder(); let text = '';
      for (;;) { const { done, value } = await reader.read(); if (done) break; text += dec.decode(value, { stream: true }); }
      body = JSON.parse(text + dec.decode());
    } else body = (await res.json()) as { data: unknown[] };
    return Response.json({ guests: body.data.length });
  },
};
