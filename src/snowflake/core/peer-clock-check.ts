/**
 * Meituan's start-up check (never in Leaf's code): compare this clock with the mean clock of the
 * other registered instances and refuse to start when it is off by more than a threshold.
 */
export interface PeerClockSample {
  peer: string;
  /** The peer's clock minus ours, corrected by half the round trip. */
  offsetMs: number;
}

export interface PeerClockVerdict {
  ok: boolean;
  /** Mean of the peers' offsets (0 without samples). */
  meanOffsetMs: number;
  samples: number;
}

/** Our clock minus the sample's midpoint: `peerTime - (sentAt + receivedAt) / 2`. */
export function offsetOf(peerTime: number, sentAt: number, receivedAt: number): number {
  return peerTime - (sentAt + receivedAt) / 2;
}

export function judgePeerClocks(samples: PeerClockSample[], maxSkewMs: number): PeerClockVerdict {
  if (samples.length === 0) {
    return { ok: true, meanOffsetMs: 0, samples: 0 };
  }
  const meanOffsetMs = samples.reduce((sum, s) => sum + s.offsetMs, 0) / samples.length;
  return { ok: Math.abs(meanOffsetMs) <= maxSkewMs, meanOffsetMs, samples: samples.length };
}
