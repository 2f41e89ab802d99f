import { ErrorKind } from '../../../src/common/id-gen.error';
import { SegmentIdGenerator } from '../../../src/segment/core/segment-id-generator';
import { FakeClock, FakeLeafAllocStore, flush, range } from './segment-fakes';
import { errorKindOf } from '../../support/error-kind';

const MINUTE = 60_000;

async function setup(step: number, options: { loadTimeoutMs?: number; maxStep?: number } = {}) {
  const clock = new FakeClock();
  const store = new FakeLeafAllocStore().add('t', step);
  const gen = new SegmentIdGenerator(store, { clock, ...options });
  await gen.sync();
  return { clock, store, gen };
}


describe('SegmentIdGenerator', () => {
  it('gives a fresh row (max_id 1, step 2000) the IDs 1, 2, 3 … and continues after 2000', async () => {
    const { store, gen } = await setup(2000);
    expect(await gen.get('t')).toEqual([1n]);
    expect(await gen.get('t', 3)).toEqual([2n, 3n, 4n]);
    const rest: bigint[] = [];
    for (let i = 0; i < 4; i++) {
      rest.push(...(await gen.get('t', 1000)));
    }
    expect(rest).toEqual(range(5, 4004));
    expect(store.rows.get('t')?.maxId).toBeGreaterThanOrEqual(4001n);
  });

  it('starts exactly one preload once more than 10 % of the segment is used', async () => {
    const { store, gen } = await setup(100);
    await gen.get('t', 10);
    expect(store.fetches).toHaveLength(1);
    expect(gen.view('t')?.loading).toBe(false);
    store.hold();
    await gen.get('t', 1);
    expect(store.fetches).toHaveLength(2);
    expect(gen.view('t')?.loading).toBe(true);
    for (let i = 0; i < 50; i++) {
      await gen.get('t', 1);
    }
    expect(store.fetches).toHaveLength(2);
    store.release();
    await flush();
    expect(gen.view('t')).toMatchObject({ nextReady: true, loading: false, max1: '201', value1: '101' });
    await gen.get('t', 10);
    expect(store.fetches).toHaveLength(2);
  });

  it('makes callers that run out wait for the load in flight, then switch', async () => {
    const { store, gen } = await setup(10);
    expect(await gen.get('t')).toEqual([1n]);
    store.hold();
    expect(await gen.get('t')).toEqual([2n]);
    expect(await gen.get('t', 8)).toEqual(range(3, 10));
    let settled = 0;
    const waiting = [gen.get('t'), gen.get('t'), gen.get('t', 2)].map((p) => p.finally(() => settled++));
    await flush();
    expect(settled).toBe(0);
    expect(store.fetches).toHaveLength(2);
    store.release();
    expect(await Promise.all(waiting)).toEqual([[11n], [12n], [13n, 14n]]);
    expect(gen.view('t')?.pos).toBe(1);
    expect(store.fetches).toHaveLength(3);
  });

  it('makes a waiter whose new segment others used up wait for the next fetch, not fail', async () => {
    const { store, gen } = await setup(10);
    await gen.get('t');
    store.hold();
    await gen.get('t', 9);
    const first = gen.get('t', 10);
    const second = gen.get('t');
    await flush();
    store.release();
    store.hold();
    expect(await first).toEqual(range(11, 20));
    await flush();
    expect(gen.view('t')).toMatchObject({ loading: true, nextReady: false });
    store.release();
    expect(await second).toEqual([21n]);
  });

  it('serves a batch across several segment switches', async () => {
    const { gen } = await setup(10);
    expect(await gen.get('t', 95)).toEqual(range(1, 95));
    expect(await gen.get('t', 3)).toEqual(range(96, 98));
  });

  it('keeps serving what the buffer holds while the DB fails, answers -3, then recovers', async () => {
    const { store, gen } = await setup(10);
    await gen.get('t', 2);
    await flush();
    expect(gen.view('t')?.nextReady).toBe(true);
    store.fail = true;
    expect(await gen.get('t', 8)).toEqual(range(3, 10));
    expect(await gen.get('t', 10)).toEqual(range(11, 20));
    await flush();
    expect(await errorKindOf(gen.get('t'))).toBe(ErrorKind.SegmentBothNotReady);
    expect(await errorKindOf(gen.get('t', 5))).toBe(ErrorKind.SegmentBothNotReady);
    const failedFetches = store.fetches.length;
    store.fail = false;
    const [next] = await gen.get('t');
    expect(store.fetches.length).toBe(failedFetches + 1);
    expect(next).toBeGreaterThan(20n);
    expect(gen.view('t')?.loading).toBe(false);
  });

  it('retries a failed preload on the next call', async () => {
    const { store, gen } = await setup(10);
    await gen.get('t');
    store.fail = true;
    await gen.get('t');
    await flush();
    expect(store.fetches).toHaveLength(2);
    expect(gen.view('t')).toMatchObject({ nextReady: false, loading: false });
    store.fail = false;
    await gen.get('t');
    await flush();
    expect(gen.view('t')?.nextReady).toBe(true);
  });

  it('answers -3 when the first load of a tag fails, and loads it on a later call', async () => {
    const { store, gen } = await setup(10);
    store.fail = true;
    expect(await errorKindOf(gen.get('t'))).toBe(ErrorKind.SegmentBothNotReady);
    store.fail = false;
    expect(await gen.get('t')).toEqual([1n]);
  });

  it('abandons a load that hangs past the timeout; its late result changes nothing', async () => {
    const { clock, store, gen } = await setup(10, { loadTimeoutMs: 5000 });
    await gen.get('t');
    store.hold();
    await gen.get('t', 9);
    const stuck = errorKindOf(gen.get('t'));
    await flush();
    clock.advance(5000);
    expect(await stuck).toBe(ErrorKind.SegmentBothNotReady);
    store.release();
    await flush();
    expect(gen.view('t')).toMatchObject({ nextReady: false, loading: false, max1: '0' });
    const [next] = await gen.get('t');
    // The abandoned fetch took 11..20 in the DB: a gap, never handed out.
    expect(next).toBe(21n);
  });

  it('adapts the step to how long a segment lasted, never below the DB step', async () => {
    const { clock, store, gen } = await setup(10);
    expect(await gen.get('t', 10)).toEqual(range(1, 10));
    await flush();
    clock.advance(MINUTE);
    expect(await gen.get('t', 10)).toEqual(range(11, 20));
    await flush();
    clock.advance(20 * MINUTE);
    expect(await gen.get('t', 20)).toEqual(range(21, 40));
    await flush();
    clock.advance(40 * MINUTE);
    expect(await gen.get('t', 20)).toEqual(range(41, 60));
    await flush();
    expect(store.fetches.map((f) => f.customStep)).toEqual([null, null, 20, 20, 10]);
    expect(gen.view('t')).toMatchObject({ step: 10, minStep: 10 });
    const row = store.rows.get('t');
    if (row) {
      row.step = 50;
    }
    clock.advance(40 * MINUTE);
    expect(await gen.get('t', 10)).toEqual(range(61, 70));
    await flush();
    expect(gen.view('t')).toMatchObject({ step: 50, minStep: 50, nextReady: true, value1: '71', max1: '121' });
  });

  it('does not grow the step past maxStep', async () => {
    const { store, gen } = await setup(10, { maxStep: 20 });
    await gen.get('t', 100);
    await flush();
    expect(Math.max(...store.fetches.map((f) => f.customStep ?? 0))).toBe(20);
  });

  it('answers -1 until the tags were loaded once, -2 for an unknown tag', async () => {
    const clock = new FakeClock();
    const store = new FakeLeafAllocStore().add('t', 10);
    const gen = new SegmentIdGenerator(store, { clock });
    store.failTags = true;
    expect(await errorKindOf(gen.get('t'))).toBe(ErrorKind.SegmentNotInitialised);
    store.failTags = false;
    expect(await errorKindOf(gen.get('t'))).toBe(ErrorKind.SegmentNotInitialised);
    clock.advance(1000);
    expect(await gen.get('t')).toEqual([1n]);
    expect(await errorKindOf(gen.get('nope'))).toBe(ErrorKind.SegmentKeyNotFound);
  });

  it('picks up tags created elsewhere on a miss (rate-limited) and drops removed ones on sync', async () => {
    const { clock, store, gen } = await setup(10);
    clock.advance(1000);
    expect(await errorKindOf(gen.get('u'))).toBe(ErrorKind.SegmentKeyNotFound);
    store.add('u', 5);
    expect(await errorKindOf(gen.get('u'))).toBe(ErrorKind.SegmentKeyNotFound);
    clock.advance(1000);
    expect(await gen.get('u')).toEqual([1n]);
    store.rows.delete('t');
    expect(await gen.sync()).toEqual({ added: [], removed: ['t'] });
    expect(await errorKindOf(gen.get('t'))).toBe(ErrorKind.SegmentKeyNotFound);
    expect(gen.views().map((v) => v.key)).toEqual(['u']);
  });

  it('answers -2 once a cached tag lost its row and its segments are used up', async () => {
    const { store, gen } = await setup(10);
    await gen.get('t', 5);
    await flush();
    store.rows.delete('t');
    await gen.get('t', 15);
    await flush();
    expect(await errorKindOf(gen.get('t'))).toBe(ErrorKind.SegmentKeyNotFound);
  });
});
