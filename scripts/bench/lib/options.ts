import type { Generator } from './load';

/** Command-line options of `npm run bench [-- --quick] [--runs N] [--duration S] [--only a,b] [--no-pin]`. */
export interface BenchOptions {
  quick: boolean;
  /** Measured runs per subject (the table shows the median). */
  runs: number;
  /** Seconds per measured HTTP run. */
  durationS: number;
  /**
   * HTTP comparisons (lib/compare.ts measure: queue, batch, segment): clean rounds wanted, and
   * seconds per run. Many short rounds: the ratio is a median of back-to-back pairs. `--runs` and
   * `--duration` set these too.
   */
  rounds: number;
  roundS: number;
  /** Seconds of each server's warm-up run before the rounds (the service's JIT and heap settle). */
  roundsWarmupS: number;
  /** Seconds of the warm-up run (not measured) before the first measured run of a server. */
  warmupS: number;
  /** Concurrent HTTP connections of the load generator. */
  connections: number;
  /** IDs per in-process snowflake measurement. */
  snowflakeIds: number;
  /** Cases to run; empty = all. */
  only: string[];
  /** Keep the bench database afterwards. */
  keepDb: boolean;
  /** Directory for `--cpu-prof` profiles of the service processes (`--profile DIR`), or undefined. */
  profileDir: string | undefined;
  /**
   * Load generators of the HTTP comparisons (`--load autocannon,wrk`); undefined = autocannon, plus
   * wrk when it is installed.
   */
  generators?: Generator[];
  /**
   * Pin the HTTP servers to one CPU and the load generators to the others (lib/placement.ts) when
   * taskset and two CPUs are there; `--no-pin` shares every CPU between them, as before.
   */
  pin: boolean;
  /** Sizes (apps × 64 shards) of the scale case (`--scale-apps 256` or `16,64,256`); undefined = its defaults. */
  scaleApps?: number[];
}

export const CASES = ['queue', 'batch', 'segment', 'snowflake', 'refill', 'ahead', 'client', 'scale'] as const;

export function parseOptions(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const opts: BenchOptions = {
    quick,
    runs: 3,
    durationS: quick ? 2 : 8,
    warmupS: quick ? 1 : 2,
    rounds: quick ? 11 : 7,
    roundS: quick ? 1 : 3,
    roundsWarmupS: 4,
    connections: 64,
    snowflakeIds: quick ? 1_000_000 : 4_000_000,
    only: [],
    keepDb: argv.includes('--keep-db'),
    pin: !argv.includes('--no-pin'),
    profileDir: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case '--runs':
        opts.runs = positiveInt('--runs', value);
        opts.rounds = opts.runs;
        i++;
        break;
      case '--duration':
        opts.durationS = positiveInt('--duration', value);
        opts.roundS = opts.durationS;
        i++;
        break;
      case '--connections':
        opts.connections = positiveInt('--connections', value);
        i++;
        break;
      case '--profile':
        opts.profileDir = value;
        i++;
        break;
      case '--load':
        opts.generators = (value ?? '').split(',').filter((g) => g.length > 0) as Generator[];
        for (const g of opts.generators) {
          if (g !== 'autocannon' && g !== 'wrk') {
            throw new Error(`--load: unknown generator '${String(g)}' (autocannon, wrk)`);
          }
        }
        i++;
        break;
      case '--scale-apps':
        opts.scaleApps = (value ?? '').split(',').map((a) => positiveInt('--scale-apps', a));
        i++;
        break;
      case '--only':
        opts.only = (value ?? '').split(',').filter((c) => c.length > 0);
        for (const c of opts.only) {
          if (!(CASES as readonly string[]).includes(c)) {
            throw new Error(`--only: unknown case '${c}' (cases: ${CASES.join(', ')})`);
          }
        }
        i++;
        break;
      default:
        break;
    }
  }
  return opts;
}

export function wants(opts: BenchOptions, name: (typeof CASES)[number]): boolean {
  return opts.only.length === 0 || opts.only.includes(name);
}

function positiveInt(flag: string, raw: string | undefined): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new Error(`${flag} needs a positive integer, got '${raw ?? ''}'`);
  }
  return n;
}
