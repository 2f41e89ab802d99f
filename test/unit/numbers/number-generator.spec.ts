import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { NumberGenerator } from '../../../src/numbers/core/number-generator';
import { errorKindOf as kindOf } from '../../support/error-kind';
import { FakeClock, FakeNumberStore, World, parseDbTime } from './fake-number-store';

const OPTIONS = { marginMs: 1000, trustMs: 60_000, boundaryWindowMs: 5000 };

function instance(store: FakeNumberStore, offsetMs = 0): NumberGenerator {
  return new NumberGenerator(store, { ...OPTIONS, clock: new FakeClock(store.world, offsetMs) });
}

/** A second instance's view of the same database (its own connection: a gate of its own). */
function sameDatabase(store: FakeNumberStore): FakeNumberStore {
  const other = new FakeNumberStore(store.world);
  Object.assign(other, { formats: store.formats, sequences: store.sequences });
  return other;
}

describe('NumberGenerator', () => {
  let world: World;
  let store: FakeNumberStore;

  beforeEach(() => {
    world = new World(parseDbTime('2026-11-26 09:00:00'));
    store = new FakeNumberStore(world);
    store.define('ord', 'ORD{yyyyMMdd}{seq:6}', 'daily');
  });

  it('the first two numbers of the day are 000001 and 000002, dated by the database clock', async () => {
    const gen = instance(store, 86_400_000 * 3);
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000001']);
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000002']);
    expect(await gen.next('ord', 3)).toEqual(['ORD20261126000003', 'ORD20261126000004', 'ORD20261126000005']);
  });

  it('reads time only through its clock (Date.now is never called by the generator itself)', async () => {
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => {
      throw new Error('the wall clock was read');
    });
    try {
      const gen = instance(store);
      world.advance(15 * 3600_000);
      expect(await gen.next('ord', 2)).toEqual(['ORD20261127000001', 'ORD20261127000002']);
    } finally {
      spy.mockRestore();
    }
  });

  it('a machine suspended across midnight (monotonic clock stopped): no old-day number after it wakes', async () => {
    world.dbMs = parseDbTime('2026-11-26 23:59:50');
    const gen = instance(store);
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000001']);
    world.suspend(30_000);
    expect(await gen.next('ord', 1)).toEqual(['ORD20261127000001']);
  });

  it('a wall clock stepped back does not lengthen a proof; one stepped forward only shortens it (a reading, nothing lost)', async () => {
    world.dbMs = parseDbTime('2026-11-26 23:59:50');
    const gen = instance(store);
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000001']);
    world.stepWall(-3600_000);
    world.advance(9500); // 23:59:59.5: the proof (until 23:59:59) ran out by the monotonic clock
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000002']);
    expect(store.clockReads).toBe(1);
    world.advance(1000); // 00:00:00.5
    expect(await gen.next('ord', 1)).toEqual(['ORD20261127000001']);
    world.stepWall(3600_000);
    const reads = store.clockReads;
    expect(await gen.next('ord', 1)).toEqual(['ORD20261127000002']);
    expect(store.clockReads).toBe(reads + 1);
  });

  it('serves from segments: one allocation per step, the next one preloaded after 10 %', async () => {
    const gen = instance(store);
    const out: string[] = [];
    for (let i = 0; i < 25; i++) {
      out.push(...(await gen.next('ord', 1)));
    }
    expect(out).toEqual(Array.from({ length: 25 }, (_, i) => `ORD20261126${String(i + 1).padStart(6, '0')}`));
    // 1..10, then 11..20, 21..30 and 31..40 each preloaded once 10 % of the one before was used.
    expect(store.allocations).toBe(4);
    expect(gen.view('ord')?.next).not.toBeNull();
  });

  it('confirms the database clock in the background once less than 20 % of the trust is left: no request waits for it', async () => {
    const gen = instance(store);
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000001']);
    world.advance(50_000); // 10 s of the 60 s trust left
    let open!: () => void;
    store.gate = new Promise((resolve) => (open = resolve));
    // Served from memory at once; the reading (held by the slow database) goes on in the background.
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000002']);
    open();
    store.gate = null;
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.clockReads).toBe(1);
    world.advance(15_000); // 65 s after the allocation: that reading has run out, the background one holds
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000003']);
    expect(store.clockReads).toBe(1);
  });

  it('no background readings close to the period end (a reading then would not hold longer)', async () => {
    world.dbMs = parseDbTime('2026-11-26 23:59:40');
    const gen = instance(store);
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000001']);
    world.advance(10_000); // 23:59:50: 9 s of proof left, less than 20 % of the trust, and limited by the day's end
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000002']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.clockReads).toBe(0);
  });

  it('two instances whose clocks differ: every number once', async () => {
    const a = instance(store, -5000);
    const b = instance(sameDatabase(store), 5000);
    const seen = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const gen = i % 3 === 0 ? b : a;
      const batch = await Promise.all([gen.next('ord', 1), gen.next('ord', 2)]);
      for (const n of batch.flat()) {
        expect(seen.has(n)).toBe(false);
        seen.add(n);
      }
      world.advance(7);
    }
    expect(seen.size).toBe(1200);
  });

  it('midnight: the sequence restarts at 1, and no instance issues an old-day number once the new day began', async () => {
    world.dbMs = parseDbTime('2026-11-26 23:59:50');
    const storeB = sameDatabase(store);
    const a = instance(store, 5000);
    const b = instance(storeB, -5000);
    expect(await a.next('ord', 1)).toEqual(['ORD20261126000001']);
    expect(await b.next('ord', 1)).toEqual(['ORD20261126000011']);
    world.advance(8000); // 23:59:58: within the proof (10 s to midnight - 1 s margin)
    expect(await a.next('ord', 1)).toEqual(['ORD20261126000002']);
    expect(store.clockReads).toBe(0);
    world.advance(1500); // 23:59:59.5: the proof ran out; a clock read confirms the old day, no numbers lost
    expect(await a.next('ord', 1)).toEqual(['ORD20261126000003']);
    expect(store.clockReads).toBe(1);
    const allocations = store.allocations;

    // A's next reading is taken at 23:59:59.7, and its reply is slow: it arrives after midnight.
    world.advance(200);
    let open!: () => void;
    store.gate = new Promise((resolve) => (open = resolve));
    const dbBefore = world.dbMs;
    const r1 = a.next('ord', 1);
    await new Promise((resolve) => setImmediate(resolve));
    world.advance(500); // 00:00:00.2
    expect(dbBefore < parseDbTime('2026-11-27 00:00:00')).toBe(true);
    // B reads the clock, sees the new day and restarts the sequence at 1.
    expect(await b.next('ord', 1)).toEqual(['ORD20261127000001']);
    // A request to A that starts now must not get an old-day number, whatever A's reading says.
    const r2 = a.next('ord', 1);
    open();
    store.gate = null;
    const [n1, n2] = await Promise.all([r1, r2]);
    expect(n2[0]).toMatch(/^ORD20261127/);
    // r1 started before A's reading was sent; the day was old or new then: both are allowed.
    expect(n1[0]).toMatch(/^ORD2026112[67]/);
    expect(store.allocations).toBeGreaterThan(allocations);
    expect(await a.next('ord', 1)).toEqual([expect.stringMatching(/^ORD20261127/)]);
  });

  it('a reading sent before midnight whose reply arrives after it serves only the requests that started before it', async () => {
    world.dbMs = parseDbTime('2026-11-26 23:59:55');
    const storeB = sameDatabase(store);
    const a = instance(store);
    const b = instance(storeB);
    expect(await a.next('ord', 1)).toEqual(['ORD20261126000001']);
    world.advance(4500); // 23:59:59.5: A's proof has run out
    // The database answers A's reading at 23:59:59.5, the reply is held until after midnight.
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    const readClock = store.readClock.bind(store);
    store.readClock = async (key) => {
      const reading = await readClock(key);
      await held;
      return reading;
    };
    const early = a.next('ord', 1);
    await new Promise((resolve) => setImmediate(resolve));
    world.advance(1000); // 00:00:00.5
    expect(await b.next('ord', 1)).toEqual(['ORD20261127000001']);
    const late = a.next('ord', 1);
    open();
    expect(await early).toEqual(['ORD20261126000002']);
    expect((await late)[0]).toMatch(/^ORD20261127/);
  });

  it('close to a period end an allocation takes only what is asked (nothing of the old day is wasted)', async () => {
    store.define('small', 'S{yyyyMMdd}{seq:6}', 'daily', 100);
    world.dbMs = parseDbTime('2026-11-26 23:59:50');
    const gen = instance(store);
    expect(await gen.next('small', 1)).toEqual(['S20261126000001']);
    world.advance(7000); // 3 s to midnight: no preload any more
    expect((await gen.next('small', 99)).at(-1)).toBe('S20261126000100');
    expect(store.sequences.get('small|20261126')).toBe(100n);
    expect(await gen.next('small', 2)).toEqual(['S20261126000101', 'S20261126000102']);
    expect(store.sequences.get('small|20261126')).toBe(102n);
  });

  it('200 concurrent requests in the last seconds of the day: every one served, by allocations of their summed demand', async () => {
    store.define('burst', 'B{yyyyMMdd}{seq:6}', 'daily', 100);
    world.dbMs = parseDbTime('2026-11-26 23:59:57');
    const gen = instance(store);
    expect(await gen.next('burst', 1)).toEqual(['B20261126000001']);
    const allocations = store.allocations;
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => gen.next('burst', 1)));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    expect(failed).toEqual([]);
    const numbers = results.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
    expect(new Set(numbers).size).toBe(200);
    expect(numbers.sort()).toEqual(Array.from({ length: 200 }, (_, i) => `B20261126${String(i + 2).padStart(6, '0')}`));
    // Exact allocations near the end: nothing of the old day is wasted, and a handful of them, not one per request.
    expect(store.sequences.get('burst|20261126')).toBe(201n);
    expect(store.allocations - allocations).toBeLessThanOrEqual(3);
  });

  it('a request that gets nothing from many database calls in a row fails with a message that says so', async () => {
    world.dbMs = parseDbTime('2026-11-26 23:59:57');
    const gen = instance(store);
    expect((await gen.next('ord', 10)).at(-1)).toBe('ORD20261126000010');
    // Every allocation is taken by someone else before this request's turn: a store that answers with nothing left.
    const allocate = store.allocate.bind(store);
    store.allocate = async (key, request) => {
      const result = await allocate(key, request);
      return result.kind === 'allocated' ? { ...result, from: result.to + 1n } : result;
    };
    const err: unknown = await gen.next('ord', 1).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IdGenError);
    expect((err as IdGenError).kind).toBe(ErrorKind.BackendUnavailable);
    expect((err as IdGenError).message).toMatch(/16 database calls in a row/);
  });

  it('{seq:2}: 99 numbers, then NUMBER_EXHAUSTED (answered from memory), never a longer number or a wrap', async () => {
    store.define('t', 'T{seq:2}', 'none', 50);
    const gen = instance(store);
    const out: string[] = [];
    for (let i = 0; i < 99; i++) {
      out.push(...(await gen.next('t', 1)));
    }
    expect(out).toEqual(Array.from({ length: 99 }, (_, i) => `T${String(i + 1).padStart(2, '0')}`));
    expect(await kindOf(gen.next('t', 1))).toBe(ErrorKind.NumberExhausted);
    const allocations = store.allocations;
    expect(await kindOf(gen.next('t', 1))).toBe(ErrorKind.NumberExhausted);
    expect(store.allocations).toBe(allocations);
    world.advance(61_000);
    expect(await kindOf(gen.next('t', 1))).toBe(ErrorKind.NumberExhausted);
    expect(store.allocations).toBe(allocations + 1);
  });

  it('an exhausted day ends with the day', async () => {
    store.define('d', 'D{yyyyMMdd}{seq:1}', 'daily');
    world.dbMs = parseDbTime('2026-11-26 23:59:40');
    const gen = instance(store);
    for (let i = 1; i <= 9; i++) {
      expect(await gen.next('d', 1)).toEqual([`D20261126${i}`]);
    }
    expect(await kindOf(gen.next('d', 1))).toBe(ErrorKind.NumberExhausted);
    world.advance(20_000);
    expect(await gen.next('d', 1)).toEqual(['D202611271']);
  });

  it("periodUse: the share of the running period allocated (all instances, as of this one's last allocation), 1 when used up, nothing after the period", async () => {
    store.define('d', 'D{yyyyMMdd}{seq:2}', 'daily');
    world.dbMs = parseDbTime('2026-11-26 23:50:00');
    const gen = instance(store);
    const other = instance(sameDatabase(store));
    expect(gen.periodUse()).toEqual([]);
    // {seq:2}: capacity 99, allocated one by one (1 % of it).
    for (let i = 0; i < 3; i++) {
      await gen.next('d', 1);
    }
    await new Promise((resolve) => setImmediate(resolve));
    // Its highest allocation (3, or 4 with the preload) over 99.
    const held = BigInt(gen.view('d')?.next?.max ?? gen.view('d')?.current?.max ?? 0);
    expect(held).toBeGreaterThanOrEqual(3n);
    expect(gen.periodUse()).toEqual([{ key: 'd', used: Math.floor((Number(held) * 1e6) / 99) / 1e6 }]);
    const takeAll = async (g: NumberGenerator): Promise<number> => {
      for (let taken = 0; ; taken++) {
        try {
          await g.next('d', 1);
        } catch (err) {
          expect((err as IdGenError).kind).toBe(ErrorKind.NumberExhausted);
          return taken;
        }
      }
    };
    expect(await takeAll(other)).toBe(99 - Number(held));
    // This instance has not allocated since: it still reports its own last allocation.
    expect(gen.periodUse()[0].used).toBeCloseTo(Number(held) / 99, 5);
    expect(other.periodUse()).toEqual([{ key: 'd', used: 1 }]);
    // It hands out what it holds, then finds the period used up.
    expect(await takeAll(gen)).toBeLessThanOrEqual(1);
    expect(gen.periodUse()).toEqual([{ key: 'd', used: 1 }]);
    // The day ends with no request: no entry for a period that is over.
    world.advance(10 * 60_000);
    expect(gen.periodUse()).toEqual([]);
    expect(other.periodUse()).toEqual([]);
    await gen.next('d', 1);
    expect(gen.periodUse()).toEqual([{ key: 'd', used: Math.floor(1e6 / 99) / 1e6 }]);
  });

  it('periodUse of a format without reset: the whole sequence is its period', async () => {
    store.define('n', 'N{seq:4}', 'none', 50);
    const gen = instance(store);
    await gen.next('n', 1);
    world.advance(400 * 86_400_000);
    expect(gen.periodUse()).toEqual([{ key: 'n', used: Math.floor((50 * 1e6) / 9999) / 1e6 }]);
  });

  it('an unknown key: NUMBER_FORMAT_NOT_FOUND, answered from memory for a second', async () => {
    const gen = instance(store);
    expect(await kindOf(gen.next('nope', 1))).toBe(ErrorKind.NumberFormatNotFound);
    expect(await kindOf(gen.next('nope', 1))).toBe(ErrorKind.NumberFormatNotFound);
    expect(store.allocations).toBe(1);
    store.define('nope', 'N{seq:3}', 'none');
    world.advance(1001);
    expect(await gen.next('nope', 1)).toEqual(['N001']);
    expect(gen.views().map((v) => v.key)).toEqual(['nope']);
  });

  it('a deleted format stops at the next clock reading; its segments are a gap', async () => {
    const gen = instance(store);
    await gen.next('ord', 1);
    store.formats.delete('ord');
    world.advance(61_000);
    expect(await kindOf(gen.next('ord', 1))).toBe(ErrorKind.NumberFormatNotFound);
    expect(gen.view('ord')).toBeNull();
  });

  it('deleted and created again on this instance while a preload was in flight: its late "not found" does not hide the new format', async () => {
    const gen = instance(store);
    store.define('del', 'D{seq:4}', 'none', 3);
    // The second allocation (the preload) reads the database while the format is deleted; its reply
    // arrives only after the format was created again (a slow reply, the test holds it).
    let reply!: () => void;
    const held = new Promise<void>((resolve) => (reply = resolve));
    const allocate = store.allocate.bind(store);
    let calls = 0;
    const answered: string[] = [];
    store.allocate = async (key, request) => {
      const first = ++calls === 1;
      const result = await allocate(key, request);
      if (!first) {
        answered.push(result.kind);
        await held;
      }
      return result;
    };
    expect(await gen.next('del', 1)).toEqual(['D0001']); // 1..3; 1 of 3 used: the preload starts
    expect(calls).toBe(2);
    // The admin delete on this instance.
    store.formats.delete('del');
    gen.drop('del');
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toEqual(['not-found']);
    // The admin create on this instance, then the preload's reply.
    store.define('del', 'D{seq:4}', 'none', 3);
    gen.forgetMiss('del');
    reply();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await gen.next('del', 1)).toEqual(['D0004']);
  });

  it('a database error fails the request (a gap), and the next request allocates again', async () => {
    const gen = instance(store);
    store.failure = new Error('connect ECONNREFUSED');
    await expect(gen.next('ord', 1)).rejects.toThrow('ECONNREFUSED');
    store.failure = null;
    expect(await gen.next('ord', 1)).toEqual(['ORD20261126000001']);
  });

  it('the database clock moved back across midnight: the new day goes on, never the old one again', async () => {
    world.dbMs = parseDbTime('2026-11-27 00:00:01');
    const gen = instance(store);
    expect(await gen.next('ord', 1)).toEqual(['ORD20261127000001']);
    world.dbMs = parseDbTime('2026-11-26 23:59:58');
    world.advance(61_000);
    const after = await gen.next('ord', 20);
    expect(after.every((n) => n.startsWith('ORD20261127'))).toBe(true);
  });
});
