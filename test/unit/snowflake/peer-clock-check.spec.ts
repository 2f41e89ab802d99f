import { judgePeerClocks, offsetOf } from '../../../src/snowflake/core/peer-clock-check';

describe('peer clock check', () => {
  it('corrects a peer time by half the round trip', () => {
    expect(offsetOf(1_000_050, 1_000_000, 1_000_100)).toBe(0);
    expect(offsetOf(1_002_050, 1_000_000, 1_000_100)).toBe(2000);
  });

  it('passes without peers', () => {
    expect(judgePeerClocks([], 10)).toEqual({ ok: true, meanOffsetMs: 0, samples: 0 });
  });

  it('compares with the mean of the peers, not with each', () => {
    const samples = [
      { peer: 'a', offsetMs: 9000 },
      { peer: 'b', offsetMs: -8000 },
      { peer: 'c', offsetMs: 2000 },
    ];
    expect(judgePeerClocks(samples, 1000)).toEqual({ ok: true, meanOffsetMs: 1000, samples: 3 });
    expect(judgePeerClocks(samples, 999).ok).toBe(false);
  });

  it('refuses a clock ahead of or behind the peers by more than the threshold', () => {
    expect(judgePeerClocks([{ peer: 'a', offsetMs: -6000 }], 5000).ok).toBe(false);
    expect(judgePeerClocks([{ peer: 'a', offsetMs: 6000 }], 5000).ok).toBe(false);
    expect(judgePeerClocks([{ peer: 'a', offsetMs: 5000 }], 5000).ok).toBe(true);
  });
});
