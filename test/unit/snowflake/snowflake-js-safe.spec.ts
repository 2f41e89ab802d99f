import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { systemClock } from '../../../src/snowflake/core/clock';
import { SnowflakeGenerator } from '../../../src/snowflake/core/snowflake-generator';
import { JS_SAFE_LAYOUT, JS_SAFE_LIMIT, decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { FakeClock } from './fake-clock';

const TWEPOCH = 1288834974657;
const T = 1_763_769_600_000;

function jsSafe(clock: FakeClock | typeof systemClock, workerId = 31, random?: (bound: number) => number): SnowflakeGenerator {
  const gen = new SnowflakeGenerator(
    { twepoch: TWEPOCH, workerId, clockToleranceMs: 5, randomStartBound: 8, layout: JS_SAFE_LAYOUT },
    clock,
    random,
  );
  gen.raiseCeiling(Number.POSITIVE_INFINITY);
  return gen;
}

describe('SnowflakeGenerator with the js-safe layout', () => {
  it('lays out 41-bit ms | 5-bit worker | 7-bit sequence', async () => {
    const clock = new FakeClock(TWEPOCH + 1000);
    expect(await jsSafe(clock, 5, () => 7).next()).toBe(4096647n); // 1000 << 12 | 5 << 7 | 7
  });

  it('gives 128 IDs per millisecond, then waits for the next one', async () => {
    const clock = new FakeClock(T);
    const gen = jsSafe(clock, 1, () => 0);
    const first = await gen.nextBatch(128);
    expect(first.map((id) => decodeId(id, TWEPOCH, JS_SAFE_LAYOUT).sequence)).toEqual([...Array(128).keys()]);
    clock.autoAdvance = 1;
    const next = decodeId(await gen.next(), TWEPOCH, JS_SAFE_LAYOUT);
    expect(next.timestamp).toBeGreaterThan(T);
    expect(next.sequence).toBe(0);
  });

  it('starts each millisecond below its own random bound (8), leaving at least 120 IDs per ms', async () => {
    const clock = new FakeClock(T);
    clock.autoAdvance = 1;
    const ids = await jsSafe(clock).nextBatch(500);
    const sequences = ids.map((id) => decodeId(id, TWEPOCH, JS_SAFE_LAYOUT).sequence);
    expect(Math.max(...sequences)).toBeLessThan(8);
  });

  it('refuses a worker id above 31 and a random start bound above its 128 sequences', () => {
    expect(() => jsSafe(new FakeClock(T), 32)).toThrow(IdGenError);
    expect(
      () =>
        new SnowflakeGenerator(
          { twepoch: TWEPOCH, workerId: 1, clockToleranceMs: 5, randomStartBound: 129, layout: JS_SAFE_LAYOUT },
          new FakeClock(T),
        ),
    ).toThrow(RangeError);
  });

  it('refuses twepoch + 2^41 ms, never a wrapped ID', async () => {
    const twepoch = 1_000_000;
    const clock = new FakeClock(twepoch + 2 ** 41 - 1);
    const gen = new SnowflakeGenerator(
      { twepoch, workerId: 31, clockToleranceMs: 5, randomStartBound: 1, layout: JS_SAFE_LAYOUT },
      clock,
    );
    gen.raiseCeiling(Number.POSITIVE_INFINITY);
    expect(await gen.next()).toBe(JS_SAFE_LIMIT - 128n);
    clock.time = twepoch + 2 ** 41;
    const err = await gen.next().then(
      () => null,
      (e: unknown) => e as IdGenError,
    );
    expect(err?.kind).toBe(ErrorKind.SnowflakeTimeOverflow);
  });

  it('issues 100,000 IDs on the real clock, all below 2^53 and strictly increasing', async () => {
    const gen = jsSafe(systemClock, 17);
    let previous = -1n;
    let violations = 0;
    let above = 0;
    let issued = 0;
    while (issued < 100_000) {
      for (const id of await gen.nextBatch(1000)) {
        if (id <= previous) {
          violations++;
        }
        if (id >= JS_SAFE_LIMIT || id > BigInt(Number.MAX_SAFE_INTEGER)) {
          above++;
        }
        previous = id;
        issued++;
      }
    }
    expect(issued).toBe(100_000);
    expect(violations).toBe(0);
    expect(above).toBe(0);
    expect(decodeId(previous, TWEPOCH, JS_SAFE_LAYOUT).workerId).toBe(17);
  });
});

describe('SnowflakeGenerator guard', () => {
  it('is asked before every run of IDs and again at its end, and stops them when it throws', async () => {
    const clock = new FakeClock(T);
    let allowed = true;
    let asked = 0;
    const gen = new SnowflakeGenerator(
      {
        twepoch: TWEPOCH,
        workerId: 1,
        clockToleranceMs: 5,
        randomStartBound: 1,
        guard: () => {
          asked++;
          if (!allowed) {
            throw new IdGenError(ErrorKind.SnowflakeLeaseLost, 'lease gone');
          }
        },
      },
      clock,
    );
    gen.raiseCeiling(Number.POSITIVE_INFINITY);
    await gen.nextBatch(10);
    expect(asked).toBe(2);
    allowed = false;
    await expect(gen.next()).rejects.toMatchObject({ kind: ErrorKind.SnowflakeLeaseLost });
  });

  it('is asked again after a rollback wait (the process may have been paused meanwhile)', async () => {
    const clock = new FakeClock(T);
    let calls = 0;
    const gen = new SnowflakeGenerator(
      {
        twepoch: TWEPOCH,
        workerId: 1,
        clockToleranceMs: 5,
        randomStartBound: 1,
        guard: () => {
          // 1-2: the first run; 3-4: the run that finds the clock behind; 5: after the wait.
          if (++calls === 5) {
            throw new IdGenError(ErrorKind.SnowflakeLeaseLost, 'lease gone during the wait');
          }
        },
      },
      clock,
    );
    gen.raiseCeiling(Number.POSITIVE_INFINITY);
    await gen.next();
    clock.time = T - 3;
    await expect(gen.next()).rejects.toMatchObject({ kind: ErrorKind.SnowflakeLeaseLost });
    expect(clock.sleeps).toEqual([6]);
  });

  it('returns none of a run during which the lease deadline passed (checked before and after the run)', async () => {
    // The clock moves 1 ms per read: each ID of the run is a new millisecond. The lease's
    // deadline (monotonic, here the same clock) passes in the middle of the run.
    const clock = new FakeClock(T);
    clock.autoAdvance = 1;
    const leasedUntil = (deadline: number) => (): void => {
      if (clock.time >= deadline) {
        throw new IdGenError(ErrorKind.SnowflakeLeaseLost, 'lease deadline passed');
      }
    };
    const options = { twepoch: TWEPOCH, workerId: 1, clockToleranceMs: 5, randomStartBound: 1 };
    const gen = new SnowflakeGenerator({ ...options, guard: leasedUntil(T + 5) }, clock);
    gen.raiseCeiling(Number.POSITIVE_INFINITY);
    await expect(gen.nextBatch(10)).rejects.toMatchObject({ kind: ErrorKind.SnowflakeLeaseLost });
    // A run that ends before the deadline is returned whole.
    const early = new SnowflakeGenerator({ ...options, guard: leasedUntil(T + 100) }, clock);
    early.raiseCeiling(Number.POSITIVE_INFINITY);
    expect(await early.nextBatch(10)).toHaveLength(10);
  });
});
