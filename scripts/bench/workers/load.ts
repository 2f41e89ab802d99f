/**
 * The load generator, a process of its own: autocannon against one server, cycling through the
 * given paths on every connection. Prints one JSON line with the figures the table needs.
 * Usage: node -r ts-node/register/transpile-only load.ts '{"port":…,"paths":[…],"connections":…,"durationS":…}'
 */
import autocannon from 'autocannon';
import { OthersWatch, watchOthers } from '../lib/cpu';

interface LoadSpec {
  port: number;
  paths: string[];
  connections: number;
  durationS: number;
  /** Pinned servers: measure the share of the server's CPU others took, over autocannon's run only. */
  watch?: OthersWatch;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  const others = spec.watch === undefined ? undefined : watchOthers(spec.watch);
  const result = await autocannon({
    url: `http://127.0.0.1:${spec.port}`,
    connections: spec.connections,
    duration: spec.durationS,
    requests: spec.paths.map((path) => ({ method: 'GET' as const, path })),
  });
  const total = result.requests.total;
  // start/finish to the ms: `duration` is rounded to 10 ms (±0.5 % of a 1 s run).
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000;
  const othersOnServerCpu = others?.();
  console.log(
    JSON.stringify({
      requests: total,
      seconds,
      reqPerSec: total / seconds,
      p50: result.latency.p50,
      p99: result.latency.p99,
      ok: result['2xx'],
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      othersOnServerCpu,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
