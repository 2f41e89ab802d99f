/**
 * In-process snowflake throughput of one generator, in a process of its own: `ids` IDs as fast as
 * the generator gives them, then a sort of all of them to count duplicates (an ID equal to another).
 * Usage: snowflake-peers.ts <generator> <ids>, generator one of GENERATORS. Prints one JSON line.
 */
import { Snowflake as SapphireSnowflake } from '@sapphire/snowflake';
import { Snowflake as WasmSnowflake } from 'nodejs-snowflake';
import { systemClock } from '../../../src/snowflake/core/clock';
import { SnowflakeGenerator } from '../../../src/snowflake/core/snowflake-generator';

const TWEPOCH = 1288834974657;

export const GENERATORS = ['shardleaf-batch', 'shardleaf-next', 'nodejs-snowflake', '@sapphire/snowflake'] as const;
type GeneratorName = (typeof GENERATORS)[number];

/** Fills `out` completely; returns when done. */
type Fill = (out: BigUint64Array) => Promise<void>;

function shardleaf(): SnowflakeGenerator {
  const gen = new SnowflakeGenerator(
    { twepoch: TWEPOCH, workerId: 1, clockToleranceMs: 5, randomStartBound: 100 },
    systemClock,
  );
  // No registry here: stand in for one that recorded an hour ahead (the service raises the
  // ceiling after each report; the per-ID check is the same).
  gen.raiseCeiling(systemClock.now() + 3_600_000);
  return gen;
}

const fills: Record<GeneratorName, () => Fill> = {
  'shardleaf-batch': () => {
    const gen = shardleaf();
    return async (out) => {
      let n = 0;
      while (n < out.length) {
        const ids = await gen.nextBatch(Math.min(1000, out.length - n));
        for (const id of ids) {
          out[n++] = id;
        }
      }
    };
  },
  'shardleaf-next': () => {
    const gen = shardleaf();
    return async (out) => {
      for (let n = 0; n < out.length; n++) {
        out[n] = await gen.next();
      }
    };
  },
  'nodejs-snowflake': () => {
    const gen = new WasmSnowflake({ custom_epoch: TWEPOCH, instance_id: 1 });
    return async (out) => {
      for (let n = 0; n < out.length; n++) {
        out[n] = gen.getUniqueID() as bigint;
      }
    };
  },
  '@sapphire/snowflake': () => {
    const gen = new SapphireSnowflake(TWEPOCH);
    return async (out) => {
      for (let n = 0; n < out.length; n++) {
        out[n] = gen.generate({ workerId: 1n, processId: 0n });
      }
    };
  },
};

async function main(): Promise<void> {
  const name = process.argv[2] as GeneratorName;
  const ids = Number(process.argv[3] ?? 2_000_000);
  if (!(GENERATORS as readonly string[]).includes(name) || !Number.isSafeInteger(ids) || ids < 1) {
    throw new Error(`usage: snowflake-peers.ts <${GENERATORS.join('|')}> <ids>`);
  }
  const fill = fills[name]();
  // Warm-up: let the JIT see the loop before the measured fill.
  await fill(new BigUint64Array(Math.min(200_000, ids)));
  await new Promise((resolve) => setTimeout(resolve, 5));
  const out = new BigUint64Array(ids);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await fill(out);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  // CPU per ID includes the spin-wait for the next millisecond once a millisecond's 4096 are used.
  const cpuNsPerId = ((cpu.user + cpu.system) * 1000) / ids;
  let nonIncreasing = 0;
  for (let i = 1; i < out.length; i++) {
    if (out[i] <= out[i - 1]) {
      nonIncreasing++;
    }
  }
  out.sort();
  let duplicates = 0;
  for (let i = 1; i < out.length; i++) {
    if (out[i] === out[i - 1]) {
      duplicates++;
    }
  }
  console.log(JSON.stringify({ name, ids, seconds, idsPerSec: ids / seconds, cpuNsPerId, duplicates, nonIncreasing }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
