import { LengthReads, POPPERS, popsWithoutLength } from '../../../src/queue-id/core/length-reads';
import { seededRandom } from '../../support/seeded-random';

/**
 * A fake shard list popped by instances that each decide with their own LengthReads, as
 * RequestPops.popOneIndex does: a plain pop while the budget lasts, else a pop that reads the
 * length. Requests of one instance are dispatched (decided) in rounds of `inFlight`, then run in
 * Redis in dispatch order (one connection: FIFO), then their replies are handled in that order.
 */
class FakeShard {
  /** Lengths seen by reading pops, and the lengths plain pops left (unseen by the service). */
  readonly reads: number[] = [];
  readonly plainLeft: number[] = [];

  constructor(
    public length: number,
    private readonly threshold: number,
  ) {}

  /** One round of `inFlight` single gets of one instance. */
  round(reads: LengthReads, inFlight: number): void {
    const ops: Array<{ plain: boolean; ticket: number }> = [];
    for (let i = 0; i < inFlight; i++) {
      ops.push(reads.tryPlain(1, 2) ? { plain: true, ticket: 0 } : { plain: false, ticket: reads.readingPop(1, 2, 1) });
    }
    const after = ops.map(() => {
      this.length = Math.max(0, this.length - 1);
      return this.length;
    });
    ops.forEach((op, i) => {
      if (op.plain) {
        this.plainLeft.push(after[i]);
      } else {
        this.reads.push(after[i]);
        reads.read(1, 2, op.ticket, after[i], this.threshold);
      }
    });
  }

  /** The first length a reading pop saw at or below the threshold: where refill-ahead triggers. */
  get triggeredAt(): number | undefined {
    return this.reads.find((len) => len <= this.threshold);
  }
}

describe('popsWithoutLength', () => {
  it('is (length − threshold) / POPPERS rounded down, 0 at or below the threshold', () => {
    expect(POPPERS).toBe(64);
    expect(popsWithoutLength(1000, 200)).toBe(12);
    expect(popsWithoutLength(264, 200)).toBe(1);
    expect(popsWithoutLength(263, 200)).toBe(0);
    expect(popsWithoutLength(200, 200)).toBe(0);
    expect(popsWithoutLength(10, 200)).toBe(0);
    expect(popsWithoutLength(264.5, 200.5)).toBe(1);
    expect(popsWithoutLength(264.4, 200.5)).toBe(0);
  });
});

describe('LengthReads: when a single get reads the list length', () => {
  it('one instance, one request at a time: the refill triggers on the same pop as when every pop reads', () => {
    const random = seededRandom(16);
    for (let i = 0; i < 60; i++) {
      const threshold = Math.floor(random() * 3000) + (random() < 0.5 ? 0.5 : 0);
      const shard = new FakeShard(Math.floor(threshold) + 1 + Math.floor(random() * 20_000), threshold);
      const reads = new LengthReads();
      while (shard.length > 0) {
        shard.round(reads, 1);
      }
      // Every pop reading: the first pop leaving the list at or below the threshold.
      expect(shard.triggeredAt).toBe(Math.floor(threshold));
      expect(shard.plainLeft.every((len) => len > threshold)).toBe(true);
    }
  });

  it('reads the length on a small share of the pops of a long list', () => {
    const shard = new FakeShard(100_000, 20_000);
    const reads = new LengthReads();
    while (shard.length > 20_000) {
      shard.round(reads, 1);
    }
    // 80,000 pops down to the threshold; about 64 · ln(80,000 / 64) + 64 of them read.
    expect(shard.reads.length).toBeLessThan(600);
    expect(shard.plainLeft.length).toBeGreaterThan(79_000);
  });

  it('one instance, many requests in flight: plain pops never take the list to the threshold', () => {
    const random = seededRandom(17);
    for (let i = 0; i < 100; i++) {
      const threshold = 100 + Math.floor(random() * 2000);
      const maxInFlight = 1 + Math.floor(random() * 200);
      let length = threshold + Math.floor(random() * 20_000);
      const reads = new LengthReads();
      // Redis runs each pop when it is sent (one connection: in order); its reply is handled
      // later, in the same order, while further requests are sent meanwhile.
      const replies: Array<{ ticket: number; after: number }> = [];
      const seen: number[] = [];
      let plainAtOrBelow = 0;
      while (length > 0 || replies.length > 0) {
        if (length > 0 && replies.length < maxInFlight && (replies.length === 0 || random() < 0.9)) {
          const plain = reads.tryPlain(1, 2);
          const ticket = plain ? 0 : reads.readingPop(1, 2, 1);
          length--;
          if (plain) {
            plainAtOrBelow += length <= threshold ? 1 : 0;
          } else {
            replies.push({ ticket, after: length });
          }
        } else {
          const reply = replies.shift() as { ticket: number; after: number };
          seen.push(reply.after);
          reads.read(1, 2, reply.ticket, reply.after, threshold);
        }
      }
      expect(plainAtOrBelow).toBe(0);
      expect(seen.find((len) => len <= threshold)).toBe(Math.floor(threshold));
    }
  });

  it.each([2, 8, 64])('%d instances taking turns: a read triggers the refill within one turn of the threshold', (instances) => {
    const random = seededRandom(instances);
    for (let i = 0; i < 50; i++) {
      const threshold = 200 + Math.floor(random() * 2000);
      const shard = new FakeShard(threshold + Math.floor(random() * 50_000), threshold);
      const all = Array.from({ length: instances }, () => new LengthReads());
      for (let turn = 0; shard.length > 0; turn++) {
        shard.round(all[turn % instances], 1);
      }
      expect(shard.plainLeft.every((len) => len >= threshold - instances)).toBe(true);
      expect(shard.triggeredAt).toBeGreaterThanOrEqual(threshold - instances);
    }
  });

  it('after a plain pop found the list empty, the next pop reads; other shards keep their budget', () => {
    const reads = new LengthReads();
    reads.read(1, 2, reads.readingPop(1, 2, 1), 1000, 200);
    reads.read(1, 3, reads.readingPop(1, 3, 1), 1000, 200);
    expect(reads.tryPlain(1, 2)).toBe(true);
    reads.forget(1, 2);
    expect(reads.tryPlain(1, 2)).toBe(false);
    expect(reads.tryPlain(1, 3)).toBe(true);
  });

  it('a batch popped after a read (still in flight) is taken off the budget that read gives', () => {
    const reads = new LengthReads();
    const ticket = reads.readingPop(1, 2, 1);
    // A batch of 500 is sent before the single get's length comes back: it ran after it.
    const batch = reads.readingPop(1, 2, 500);
    reads.read(1, 2, ticket, 1000, 200);
    // As if the list held 500: (500 − 200) / 64 = 4 plain pops.
    let plain = 0;
    while (reads.tryPlain(1, 2)) {
      plain++;
    }
    expect(plain).toBe(4);
    reads.read(1, 2, batch, 5000, 200);
    expect(reads.tryPlain(1, 2)).toBe(true);
  });

  it('forgetAll voids every budget (a reload): the next pop of each shard reads', () => {
    const reads = new LengthReads();
    reads.read(1, 2, reads.readingPop(1, 2, 1), 100_000, 200);
    reads.read(255, 63, reads.readingPop(255, 63, 1), 100_000, 200);
    expect(reads.tryPlain(1, 2)).toBe(true);
    reads.forgetAll();
    expect(reads.tryPlain(1, 2)).toBe(false);
    expect(reads.tryPlain(255, 63)).toBe(false);
  });

  it('an app or shard outside the layout always reads', () => {
    const reads = new LengthReads();
    reads.read(256, 0, reads.readingPop(256, 0, 1), 100_000, 0);
    expect(reads.tryPlain(256, 0)).toBe(false);
  });
});
