import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { SnowflakeGenerator } from '../../../src/snowflake/core/snowflake-generator';
import { MAX_ID, decodeId } from '../../../src/snowflake/core/snowflake-layout';
import { FakeClock } from './fake-clock';

const TWEPOCH = 1288834974657;
const T = 1_763_769_600_000;

function generator(clock: FakeClock, options: Partial<{ workerId: number; tolerance: number; bound: number; twepoch: number }> = {}, random?: (bound: number) => number): SnowflakeGenerator {
  const gen = new SnowflakeGenerator(
    {
      twepoch: options.twepoch ?? TWEPOCH,
      workerId: options.workerId ?? 7,
      clockToleranceMs: options.tolerance ?? 5,
      randomStartBound: options.bound ?? 100,
    },
    clock,
    random,
  );
  gen.raiseCeiling(Number.POSITIVE_INFINITY);
  return gen;
}

async function expectKind(promise: Promise<unknown>, kind: ErrorKind): Promise<IdGenError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IdGenError);
  expect((err as IdGenError).kind).toBe(kind);
  return err as IdGenError;
}

describe('SnowflakeGenerator', () => {
  it('lays out time, worker id and sequence as Leaf does', async () => {
    const clock = new FakeClock(TWEPOCH + 1000);
    const id = await generator(clock, { workerId: 5 }, () => 7).next();
    expect(id).toBe(4194324487n); // 1000 << 22 | 5 << 12 | 7
  });

  it('starts every new millisecond at a random sequence below the bound', async () => {
    const clock = new FakeClock(T);
    clock.autoAdvance = 1; // each ID in a new millisecond
    const ids = await generator(clock).nextBatch(2000);
    const sequences = ids.map((id) => decodeId(id, TWEPOCH).sequence);
    expect(Math.max(...sequences)).toBeLessThan(100);
    expect(new Set(sequences).size).toBeGreaterThan(10);
  });

  it('honours a configured bound (1: always 0)', async () => {
    const clock = new FakeClock(T);
    clock.autoAdvance = 1;
    const ids = await generator(clock, { bound: 1 }).nextBatch(50);
    expect(ids.every((id) => decodeId(id, TWEPOCH).sequence === 0)).toBe(true);
  });

  it('counts up within a millisecond and waits for the next one when the sequence wraps', async () => {
    const clock = new FakeClock(T);
    const gen = generator(clock, {}, () => 0);
    const first = await gen.nextBatch(4096);
    expect(first.map((id) => decodeId(id, TWEPOCH).sequence)).toEqual([...Array(4096).keys()]);
    expect(first.every((id) => decodeId(id, TWEPOCH).timestamp === T)).toBe(true);
    clock.autoAdvance = 1; // the spin loop sees the clock move on
    const next = decodeId(await gen.next(), TWEPOCH);
    expect(next.timestamp).toBeGreaterThan(T);
    expect(next.sequence).toBe(0);
  });

  it('waits twice the offset when the clock moved back within the tolerance', async () => {
    const clock = new FakeClock(T);
    const gen = generator(clock);
    const before = await gen.next();
    clock.time = T - 3;
    const after = await gen.next();
    expect(clock.sleeps).toEqual([6]);
    expect(after).toBeGreaterThan(before);
    expect(decodeId(after, TWEPOCH).timestamp).toBe(T + 3);
  });

  it('refuses when the clock is still behind after the wait', async () => {
    const clock = new FakeClock(T);
    const gen = generator(clock);
    await gen.next();
    clock.time = T - 5;
    clock.advanceOnSleep = false;
    await expectKind(gen.next(), ErrorKind.SnowflakeClockBackwards);
    expect(clock.sleeps).toEqual([10]);
  });

  it('refuses at once when the clock moved back beyond the tolerance', async () => {
    const clock = new FakeClock(T);
    const gen = generator(clock);
    await gen.next();
    clock.time = T - 6;
    const err = await expectKind(gen.next(), ErrorKind.SnowflakeClockBackwards);
    expect(err.message).toContain('6 ms');
    expect(clock.sleeps).toEqual([]);
    clock.time = T + 1; // serves again once the clock caught up
    expect(decodeId(await gen.next(), TWEPOCH).timestamp).toBe(T + 1);
  });

  it('uses the configured tolerance', async () => {
    const clock = new FakeClock(T);
    const gen = generator(clock, { tolerance: 0 });
    await gen.next();
    clock.time = T - 1;
    await expectKind(gen.next(), ErrorKind.SnowflakeClockBackwards);
  });

  it('issues the last millisecond of the 41-bit range and refuses twepoch + 2^41', async () => {
    const twepoch = 1_000_000;
    const clock = new FakeClock(twepoch + 2 ** 41 - 1);
    const gen = generator(clock, { twepoch, workerId: 1023 }, () => 0);
    const last = await gen.next();
    expect(last).toBeGreaterThan(0n);
    expect(last).toBeLessThanOrEqual(MAX_ID);
    expect(last).toBe(((2n ** 41n - 1n) << 22n) | (1023n << 12n));
    clock.time = twepoch + 2 ** 41;
    await expectKind(gen.next(), ErrorKind.SnowflakeTimeOverflow);
  });

  it('refuses a time before twepoch', async () => {
    const clock = new FakeClock(TWEPOCH - 1);
    await expectKind(generator(clock).next(), ErrorKind.SnowflakeTimeOverflow);
  });

  it('switches worker id without going back in time', async () => {
    const clock = new FakeClock(T);
    const gen = generator(clock, { workerId: 1 });
    const a = await gen.next();
    gen.switchWorker(900, Number.POSITIVE_INFINITY, 0);
    const b = await gen.next();
    expect(decodeId(b, TWEPOCH).workerId).toBe(900);
    expect(b).toBeGreaterThan(a);
    expect(() => gen.switchWorker(1024, Number.POSITIVE_INFINITY, 0)).toThrow(IdGenError);
  });

  describe('floor (the time earlier holders of the worker id recorded)', () => {
    it('a new worker id issues nothing at or below its floor, even after the clock stepped back within the tolerance', async () => {
      const clock = new FakeClock(T);
      const gen = generator(clock, { workerId: 1 });
      await gen.next();
      // The fresh id's previous holder used times up to T + 3; this clock then steps back to T + 1.
      gen.switchWorker(900, Number.POSITIVE_INFINITY, T + 3);
      clock.time = T + 1;
      const b = decodeId(await gen.next(), TWEPOCH);
      expect(b.workerId).toBe(900);
      expect(b.timestamp).toBeGreaterThan(T + 3);
      expect(clock.sleeps).toEqual([4]);
      // At the floor's own millisecond: the next one.
      gen.switchWorker(901, Number.POSITIVE_INFINITY, b.timestamp + 10);
      clock.time = b.timestamp + 10;
      clock.autoAdvance = 1;
      expect(decodeId(await gen.next(), TWEPOCH).timestamp).toBeGreaterThan(b.timestamp + 10);
    });

    it('a floor further behind the clock than the tolerance is refused, not issued below', async () => {
      const clock = new FakeClock(T);
      const gen = generator(clock, { workerId: 1 });
      gen.switchWorker(2, Number.POSITIVE_INFINITY, T + 50);
      await expectKind(gen.next(), ErrorKind.SnowflakeClockBackwards);
    });

    it('the start takes the registration’s floor', async () => {
      const clock = new FakeClock(T + 2);
      clock.autoAdvance = 1;
      const gen = new SnowflakeGenerator({ twepoch: TWEPOCH, workerId: 1, clockToleranceMs: 5, randomStartBound: 1, floor: T + 2 }, clock);
      gen.raiseCeiling(Number.POSITIVE_INFINITY);
      expect(decodeId(await gen.next(), TWEPOCH).timestamp).toBeGreaterThan(T + 2);
      const stepped = new FakeClock(T);
      const other = new SnowflakeGenerator({ twepoch: TWEPOCH, workerId: 1, clockToleranceMs: 5, randomStartBound: 1, floor: T + 2 }, stepped);
      other.raiseCeiling(Number.POSITIVE_INFINITY);
      expect(decodeId(await other.next(), TWEPOCH).timestamp).toBeGreaterThan(T + 2);
      expect(stepped.sleeps).toEqual([4]);
    });
  });

  it('refuses a worker id outside 0..1023', () => {
    expect(() => generator(new FakeClock(T), { workerId: 1024 })).toThrow(IdGenError);
    expect(() => generator(new FakeClock(T), { workerId: -1 })).toThrow(IdGenError);
  });

  describe('ceiling (the time recorded in the registry)', () => {
    it('issues nothing before a time is recorded, and only below the recorded time', async () => {
      const clock = new FakeClock(T);
      const gen = new SnowflakeGenerator({ twepoch: TWEPOCH, workerId: 1, clockToleranceMs: 5, randomStartBound: 1 }, clock);
      await expectKind(gen.next(), ErrorKind.SnowflakeLeaseLost);
      gen.raiseCeiling(T + 10);
      expect(decodeId(await gen.next(), TWEPOCH).timestamp).toBe(T);
      clock.time = T + 9;
      expect(decodeId(await gen.next(), TWEPOCH).timestamp).toBe(T + 9);
      clock.time = T + 10;
      const err = await expectKind(gen.next(), ErrorKind.SnowflakeLeaseLost);
      expect(err.message).toContain('could not be extended');
      expect(gen.canIssueAt(T + 10)).toBe(false);
      gen.raiseCeiling(T + 5); // never lowered
      expect(gen.ceiling).toBe(T + 10);
      gen.raiseCeiling(T + 20);
      expect(decodeId(await gen.next(), TWEPOCH).timestamp).toBe(T + 10);
    });

    it('stops in the middle of a millisecond when stopped, and when a wrapped sequence reaches the ceiling', async () => {
      const clock = new FakeClock(T);
      const gen = new SnowflakeGenerator({ twepoch: TWEPOCH, workerId: 1, clockToleranceMs: 5, randomStartBound: 1 }, clock, () => 0);
      gen.raiseCeiling(T + 1);
      // 4096 IDs fill millisecond T; the next one would need T + 1, the ceiling.
      clock.autoAdvance = 0;
      const ids = await gen.nextBatch(4096);
      expect(new Set(ids.map((id) => decodeId(id, TWEPOCH).timestamp))).toEqual(new Set([T]));
      clock.autoAdvance = 1;
      await expectKind(gen.next(), ErrorKind.SnowflakeLeaseLost);
      const other = new SnowflakeGenerator({ twepoch: TWEPOCH, workerId: 1, clockToleranceMs: 5, randomStartBound: 1 }, new FakeClock(T));
      other.raiseCeiling(T + 100);
      await other.next();
      other.stop();
      await expectKind(other.next(), ErrorKind.SnowflakeLeaseLost);
    });
  });
});
