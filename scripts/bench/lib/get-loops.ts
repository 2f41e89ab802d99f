/** `concurrency` loops of sequential GETs until `until`; every reply must be 200. */
export async function getLoops(url: string, concurrency: number, idsPerRequest: number, until: number): Promise<{ ids: number; requests: number }> {
  let requests = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const res = await fetch(url);
        const body = await res.text();
        if (res.status !== 200) {
          throw new Error(`GET ${url}: HTTP ${res.status} ${body.slice(0, 200)}`);
        }
        requests++;
      }
    }),
  );
  return { ids: requests * idsPerRequest, requests };
}
