import { Segment, segmentRange } from '../../../src/segment/core/segment';
import { SegmentBuffer } from '../../../src/segment/core/segment-buffer';
import { syncTags } from '../../../src/segment/core/tag-sync';

describe('segmentRange (Leaf range rule)', () => {
  it('gives a fresh row max_id=1, step=2000 the IDs 1..2000', () => {
    // The fetch moved max_id from 1 to 2001.
    expect(segmentRange(2001n, 2000)).toEqual({ value: 1n, max: 2001n });
  });

  it('works beyond 2^53 without losing precision', () => {
    const maxId = 9_007_199_254_740_993n + 1000n;
    expect(segmentRange(maxId, 1000)).toEqual({ value: 9_007_199_254_740_993n, max: maxId });
  });

  it('never starts below 1', () => {
    expect(segmentRange(500n, 2000)).toEqual({ value: 1n, max: 500n });
  });
});

describe('Segment', () => {
  it('hands out value..max-1 and then nothing', () => {
    const s = new Segment();
    s.fill(2011n, 10);
    const out: bigint[] = [];
    expect(s.takeInto(out, 4)).toBe(4);
    expect(s.idle).toBe(6n);
    expect(s.takeInto(out, 100)).toBe(6);
    expect(out).toEqual([2001n, 2002n, 2003n, 2004n, 2005n, 2006n, 2007n, 2008n, 2009n, 2010n]);
    expect(s.takeInto(out, 1)).toBe(0);
    expect(s.idle).toBe(0n);
  });
});

describe('SegmentBuffer', () => {
  it('alternates positions with & 1', () => {
    const b = new SegmentBuffer('t');
    expect(b.currentPos).toBe(0);
    expect(b.nextPos()).toBe(1);
    b.nextReady = true;
    b.switchPos();
    expect(b.currentPos).toBe(1);
    expect(b.nextReady).toBe(false);
    expect(b.nextPos()).toBe(0);
    b.switchPos();
    expect(b.current).toBe(b.segments[0]);
  });

  it('asks for a preload only once more than 10 % is used', () => {
    const b = new SegmentBuffer('t');
    b.initOk = true;
    b.current.fill(101n, 100);
    b.current.takeInto([], 10);
    expect(b.needsPreload()).toBe(false);
    b.current.takeInto([], 1);
    expect(b.needsPreload()).toBe(true);
    b.nextReady = true;
    expect(b.needsPreload()).toBe(false);
  });
});

describe('syncTags (two-loop diff)', () => {
  it('adds new tags, drops removed ones and keeps the rest untouched', () => {
    const cache = new Map<string, { tag: string }>([
      ['a', { tag: 'a' }],
      ['b', { tag: 'b' }],
    ]);
    const a = cache.get('a');
    const diff = syncTags(cache, ['a', 'c'], (tag) => ({ tag }));
    expect(diff).toEqual({ added: ['c'], removed: ['b'] });
    expect([...cache.keys()].sort()).toEqual(['a', 'c']);
    expect(cache.get('a')).toBe(a);
  });

  it('empties the cache when the table is empty', () => {
    const cache = new Map([['a', 1]]);
    expect(syncTags(cache, [], () => 2)).toEqual({ added: [], removed: ['a'] });
    expect(cache.size).toBe(0);
  });
});
