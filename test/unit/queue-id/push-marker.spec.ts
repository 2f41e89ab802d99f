import { MAX_INDEX } from '../../../src/queue-id/core/queue-id-layout';
import { readPushMarker, segmentVerdict } from '../../../src/queue-id/core/push-marker';

describe('readPushMarker', () => {
  it.each([
    [null, { kind: 'none' }],
    ['0', { kind: 'index', mark: 0n }],
    ['42', { kind: 'index', mark: 42n }],
    [MAX_INDEX.toString(), { kind: 'index', mark: MAX_INDEX }],
    ['-1', { kind: 'index', mark: -1n }],
  ])('reads %p as %p', (raw, marker) => {
    expect(readPushMarker(raw)).toEqual(marker);
  });

  it.each([
    (MAX_INDEX + 1n).toString(), // 2^49: above every index
    (1n << 62n).toString(),
    'abc',
    '',
    ' 5',
    '5 ',
    '1e5',
    '0x10',
    '12345678901234567', // 17 digits
    '+5',
  ])('refuses %p as invalid (corrupt, or not ours)', (raw) => {
    expect(readPushMarker(raw)).toEqual({ kind: 'invalid', raw });
  });
});

describe('segmentVerdict', () => {
  const idx = (mark: bigint) => ({ kind: 'index' as const, mark });

  it('clears a segment above the marker, or with no marker', () => {
    expect(segmentVerdict({ kind: 'none' }, 1n, 10n, MAX_INDEX)).toEqual({ kind: 'clear' });
    expect(segmentVerdict(idx(10n), 11n, 20n, MAX_INDEX)).toEqual({ kind: 'clear' });
  });

  it('a marker above the whole segment: the row is behind, moved to the marker (cut at the limit)', () => {
    expect(segmentVerdict(idx(3000n), 1n, 1000n, MAX_INDEX)).toEqual({ kind: 'behind', advanceTo: 3000n });
    expect(segmentVerdict(idx(3000n), 1n, 1000n, 2000n)).toEqual({ kind: 'behind', advanceTo: 2000n });
  });

  it('a marker within the segment (or above it, with no room left under the limit) is an overlap: a gap only', () => {
    expect(segmentVerdict(idx(1n), 1n, 10n, MAX_INDEX)).toEqual({ kind: 'overlap' });
    expect(segmentVerdict(idx(10n), 1n, 10n, MAX_INDEX)).toEqual({ kind: 'overlap' });
    expect(segmentVerdict(idx(50n), 1n, 10n, 10n)).toEqual({ kind: 'overlap' });
  });

  it('passes an invalid marker on', () => {
    expect(segmentVerdict({ kind: 'invalid', raw: 'x' }, 1n, 10n, MAX_INDEX)).toEqual({ kind: 'invalid', raw: 'x' });
  });
});
