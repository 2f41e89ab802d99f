/**
 * The client case's measuring process (scripts/bench/cases/client.ts): one @shardleaf/client in
 * this process against one service, and the same process calling the plain HTTP routes, measured
 * alternately in one run; and, for queue IDs one by one, a bare bigint counter in the same loops
 * (the ceiling of `await queueId` and `tryQueueId`). Prints one JSON line: ClientRate[].
 *
 * Client against counter (lib/interleave.ts): in each run the counter's loop and the client's run
 * in alternated slices of SLICE_MS (the first of each pair alternating), `seconds` of slices per
 * side, and each side's rate is its IDs over the sum of its slices' wall time; the run's ratio is
 * client rate ÷ counter rate, the median of the runs' ratios is the result. Slices of a few tens of
 * ms, many per run, put a change of the machine's load on both sides about equally (blocks of 2 s,
 * counter then client, put it on one side: one run's ratio swung 0.56–1.27). After each slice the
 * process yields one event-loop turn, charged to the client (wall and CPU), in which a lease
 * fetched in the background arrives; the loops inside a slice are the ones below, unchanged. Each
 * pair is first run once, interleaved alike, for up to 1 s of slices per side and not counted (warm-up).
 *
 * The client is the built package (`clientDir`: packages/client/dist, what `npm pack` ships), not
 * its TypeScript sources.
 *
 * Spec (argv[2], JSON): clientDir, baseUrl, servicePid, appId, gatePass, tag, snowflakeKey, seconds
 * (per measurement, per side for the interleaved pairs), runs, warmupSeconds.
 */
import { loadavg } from 'node:os';
import type * as ClientPackage from '../../../packages/client/src';
import { cpuMicros } from '../lib/cpu';
import { getLoops } from '../lib/get-loops';
import { interleave, processCpuNs } from '../lib/interleave';

type ShardleafClient = ClientPackage.ShardleafClient;

export type Generator = 'queue' | 'segment' | 'snowflake';
export type Mode =
  | 'client batch 1000'
  | 'client one by one (await)'
  | 'client one by one (sync try)'
  | 'bare counter (await)'
  | 'bare counter (sync)'
  | 'HTTP GET, 1 ID per request'
  | 'HTTP GET ?count=1000';

export interface ClientRate {
  generator: Generator;
  mode: Mode;
  /** Median over the runs. */
  idsPerSec: number;
  /** Server process CPU per ID (ns), median over the runs. */
  serverCpuNsPerId: number;
  /** This (client) process's CPU per ID (ns), median. */
  clientCpuNsPerId: number;
  /** HTTP requests per second of the run (the HTTP modes; leases for the client modes). */
  requestsPerSec: number;
  /** Queue one-by-one modes: median over the runs of (this mode's ids/s ÷ its bare counter's in the same run). */
  counterRatio?: number;
  /** The same ratio per run, in run order. */
  counterRatios?: number[];
  load1: number;
}

interface Spec {
  clientDir: string;
  baseUrl: string;
  servicePid: number;
  appId: number;
  gatePass: string;
  tag: string;
  snowflakeKey: string;
  seconds: number;
  runs: number;
  warmupSeconds: number;
}

interface Sample {
  idsPerSec: number;
  serverNs: number;
  clientNs: number;
  rps: number;
  /** A client mode measured against its counter: its rate ÷ the counter's in the same run. */
  counterRatio?: number;
}

const HTTP_CONCURRENCY = 16;
/** One slice of a counter/client pair (ms): ~80 slices per side in a 2-s run. */
const SLICE_MS = 25;
const HTTP_BATCH_CONCURRENCY = 4;

/**
 * The ceiling of one ID per call: a bigint counter, and an async function returning it for the
 * awaited form. `id + 1n` rather than `n++`: V8 runs a bigint `++` about 2.4× slower than an add
 * (~440 against ~185 instructions per call under callgrind), so `++` would be a weaker ceiling.
 */
class BareCounter {
  private n = 0n;

  next(): bigint {
    const id = this.n;
    this.n = id + 1n;
    return id;
  }

  async nextAsync(): Promise<bigint> {
    const id = this.n;
    this.n = id + 1n;
    return id;
  }
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]) as Spec;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ShardleafClient } = require(spec.clientDir) as typeof ClientPackage;
  const counter = new BareCounter();
  const appId = spec.appId;
  const gatePass = spec.gatePass;
  const client = new ShardleafClient({ servers: spec.baseUrl, maxLease: 2_000_000, timeoutMs: 5000 });
  const paths: Record<Generator, string> = {
    queue: `/api/id/${spec.appId}?gatePass=${encodeURIComponent(spec.gatePass)}`,
    segment: `/api/segment/get/${encodeURIComponent(spec.tag)}`,
    snowflake: `/api/snowflake/get/${encodeURIComponent(spec.snowflakeKey)}`,
  };
  const batch = (g: Generator, n: number): Promise<bigint[]> =>
    g === 'queue' ? client.queueIdBatch(spec.appId, spec.gatePass, n) : g === 'segment' ? client.segmentIdBatch(spec.tag, n) : client.snowflakeIdBatch(spec.snowflakeKey, n);
  const one = (g: Generator): Promise<bigint> =>
    g === 'queue' ? client.queueId(spec.appId, spec.gatePass) : g === 'segment' ? client.segmentId(spec.tag) : client.snowflakeId(spec.snowflakeKey);
  const tryOne = (g: Generator): bigint | undefined =>
    g === 'queue' ? client.tryQueueId(spec.appId, spec.gatePass) : g === 'segment' ? client.trySegmentId(spec.tag) : undefined;

  /** Runs `body` for `seconds`; returns IDs taken and HTTP requests made. */
  const modes: Record<Mode, (g: Generator, until: number) => Promise<{ ids: number; requests: number }>> = {
    'client batch 1000': async (g, until) => {
      let ids = 0;
      const before = fetchesOf(client, g);
      while (performance.now() < until) {
        for (let i = 0; i < 100; i++) {
          ids += (await batch(g, 1000)).length;
        }
      }
      return { ids, requests: fetchesOf(client, g) - before };
    },
    // Queue IDs one by one: direct calls in the loop (no closure), the loops the bare counter runs too.
    'client one by one (await)': async (g, until) => {
      let ids = 0;
      const before = fetchesOf(client, g);
      while (performance.now() < until) {
        if (g === 'queue') {
          for (let i = 0; i < 10_000; i++) {
            await client.queueId(appId, gatePass);
          }
        } else {
          for (let i = 0; i < 10_000; i++) {
            await one(g);
          }
        }
        ids += 10_000;
      }
      return { ids, requests: fetchesOf(client, g) - before };
    },
    'client one by one (sync try)': async (g, until) => {
      let ids = 0;
      const before = fetchesOf(client, g);
      while (performance.now() < until) {
        if (g === 'queue') {
          for (let i = 0; i < 10_000; i++) {
            if (client.tryQueueId(appId, gatePass) === undefined) {
              await client.queueId(appId, gatePass);
            }
          }
        } else {
          for (let i = 0; i < 10_000; i++) {
            if (tryOne(g) === undefined) {
              await one(g);
            }
          }
        }
        ids += 10_000;
      }
      return { ids, requests: fetchesOf(client, g) - before };
    },
    'bare counter (await)': async (_g, until) => {
      let ids = 0;
      while (performance.now() < until) {
        for (let i = 0; i < 10_000; i++) {
          await counter.nextAsync();
        }
        ids += 10_000;
      }
      return { ids, requests: 0 };
    },
    'bare counter (sync)': async (_g, until) => {
      let ids = 0;
      while (performance.now() < until) {
        for (let i = 0; i < 10_000; i++) {
          if (counter.next() === undefined) {
            await counter.nextAsync();
          }
        }
        ids += 10_000;
      }
      return { ids, requests: 0 };
    },
    'HTTP GET, 1 ID per request': async (g, until) => getLoops(spec.baseUrl + paths[g], HTTP_CONCURRENCY, 1, until),
    'HTTP GET ?count=1000': async (g, until) =>
      getLoops(`${spec.baseUrl}${paths[g]}${paths[g].includes('?') ? '&' : '?'}count=1000`, HTTP_BATCH_CONCURRENCY, 1000, until),
  };
  // A pair [counter, client]: measured interleaved (see the header); a mode alone: one block.
  const plan: Array<[Generator, Array<Mode | [Mode, Mode]>]> = [
    [
      'queue',
      [
        'client batch 1000',
        ['bare counter (await)', 'client one by one (await)'],
        ['bare counter (sync)', 'client one by one (sync try)'],
        'HTTP GET, 1 ID per request',
        'HTTP GET ?count=1000',
      ],
    ],
    ['segment', ['client batch 1000', 'client one by one (await)', 'client one by one (sync try)', 'HTTP GET, 1 ID per request', 'HTTP GET ?count=1000']],
    ['snowflake', ['client batch 1000', 'client one by one (await)', 'HTTP GET, 1 ID per request', 'HTTP GET ?count=1000']],
  ];
  const samples = new Map<string, Sample[]>();
  const record = (g: Generator, mode: Mode, sample: Sample): void => {
    const key = `${g}|${mode}`;
    samples.set(key, [...(samples.get(key) ?? []), sample]);
  };
  for (const [g, list] of plan) {
    // Warm-up: the buffer's lease size grows to the rate (Leaf's dynamic step), the JIT warms.
    await modes['client batch 1000'](g, performance.now() + spec.warmupSeconds * 1000);
    await modes['HTTP GET, 1 ID per request'](g, performance.now() + Math.min(1, spec.warmupSeconds) * 1000);
    // The counter/client pairs' own loops, warmed alike and not counted: without it the first run
    // of a pair also timed their compilation (its ratio was the lowest of the three in 4 of 4 runs
    // of 2026-11-27, down to 0.855 against 0.93–0.95 for the next two).
    for (const entry of list) {
      if (typeof entry !== 'string') {
        const [counterMode, clientMode] = entry;
        const slices = Math.max(1, Math.round((Math.min(1, spec.warmupSeconds) * 1000) / SLICE_MS));
        await interleave((until) => modes[counterMode](g, until), (until) => modes[clientMode](g, until), slices, SLICE_MS);
      }
    }
    for (let run = 0; run < spec.runs; run++) {
      for (const entry of list) {
        const server0 = cpuMicros(spec.servicePid) ?? 0;
        if (typeof entry !== 'string') {
          const [counterMode, clientMode] = entry;
          const slices = Math.max(1, Math.round((spec.seconds * 1000) / SLICE_MS));
          const { ceiling, subject } = await interleave(
            (until) => modes[counterMode](g, until),
            (until) => modes[clientMode](g, until),
            slices,
            SLICE_MS,
          );
          const serverNs = ((cpuMicros(spec.servicePid) ?? 0) - server0) * 1000;
          // The counter makes no request: the server's CPU of the run is the client's.
          record(g, counterMode, { idsPerSec: (ceiling.ids * 1000) / ceiling.ms, serverNs: 0, clientNs: ceiling.cpuNs / ceiling.ids, rps: 0 });
          record(g, clientMode, {
            idsPerSec: (subject.ids * 1000) / subject.ms,
            serverNs: serverNs / subject.ids,
            clientNs: subject.cpuNs / subject.ids,
            rps: (subject.requests * 1000) / subject.ms,
            counterRatio: (subject.ids / subject.ms) / (ceiling.ids / ceiling.ms),
          });
          continue;
        }
        const client0 = processCpuNs();
        const t0 = performance.now();
        const { ids, requests } = await modes[entry](g, t0 + spec.seconds * 1000);
        const seconds = (performance.now() - t0) / 1000;
        const serverNs = ((cpuMicros(spec.servicePid) ?? 0) - server0) * 1000;
        const clientNs = processCpuNs() - client0;
        record(g, entry, { idsPerSec: ids / seconds, serverNs: serverNs / ids, clientNs: clientNs / ids, rps: requests / seconds });
      }
    }
  }
  await client.close();
  const out: ClientRate[] = [];
  for (const [key, list] of samples) {
    const [generator, mode] = key.split('|') as [Generator, Mode];
    const counterRatios = list[0].counterRatio === undefined ? undefined : list.map((s) => s.counterRatio ?? Number.NaN);
    out.push({
      generator,
      mode,
      idsPerSec: median(list.map((s) => s.idsPerSec)),
      serverCpuNsPerId: median(list.map((s) => s.serverNs)),
      clientCpuNsPerId: median(list.map((s) => s.clientNs)),
      requestsPerSec: median(list.map((s) => s.rps)),
      counterRatio: counterRatios === undefined ? undefined : median(counterRatios),
      counterRatios,
      load1: loadavg()[0],
    });
  }
  console.log(JSON.stringify(out));
}

function fetchesOf(client: ShardleafClient, g: Generator): number {
  return client.buffers().filter((b) => b.generator === g).reduce((n, b) => n + b.fetches, 0);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
