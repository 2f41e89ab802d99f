import { LeafAlloc, LeafAllocStore } from '../../../src/segment/core/leaf-alloc-store';
import { SegmentClock } from '../../../src/segment/core/segment-clock';

/** A clock the test moves by hand; timers fire on advance(). */
export class FakeClock implements SegmentClock {
  private timers: Array<{ at: number; fn: () => void; live: boolean }> = [];

  constructor(public t = 1_700_000_000_000) {}

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): () => void {
    const timer = { at: this.t + ms, fn, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  }

  advance(ms: number): void {
    this.t += ms;
    const due = this.timers.filter((x) => x.live && x.at <= this.t);
    this.timers = this.timers.filter((x) => x.live && x.at > this.t);
    for (const timer of due) {
      timer.fn();
    }
  }
}

interface Row {
  maxId: bigint;
  step: number;
}

interface Gate {
  promise: Promise<void>;
  open: () => void;
}

/**
 * An in-memory leaf_alloc with Leaf's SQL semantics. `hold()` makes the next fetches wait until
 * released; `fail` makes them throw, as a DB outage would.
 */
export class FakeLeafAllocStore implements LeafAllocStore {
  readonly rows = new Map<string, Row>();
  fetches: Array<{ tag: string; customStep: number | null }> = [];
  fail = false;
  failTags = false;
  private gate: Gate | null = null;

  add(tag: string, step: number, maxId = 1n): this {
    this.rows.set(tag, { maxId, step });
    return this;
  }

  hold(): void {
    let open = (): void => undefined;
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gate = { promise, open };
  }

  release(): void {
    const gate = this.gate;
    this.gate = null;
    gate?.open();
  }

  async getAllTags(): Promise<string[]> {
    if (this.failTags) {
      throw new Error('connect ECONNREFUSED');
    }
    return [...this.rows.keys()];
  }

  updateMaxIdAndGetLeafAlloc(tag: string): Promise<LeafAlloc | null> {
    return this.advance(tag, null);
  }

  updateMaxIdByCustomStepAndGetLeafAlloc(tag: string, customStep: number): Promise<LeafAlloc | null> {
    return this.advance(tag, customStep);
  }

  private async advance(tag: string, customStep: number | null): Promise<LeafAlloc | null> {
    this.fetches.push({ tag, customStep });
    if (this.gate) {
      await this.gate.promise;
    }
    if (this.fail) {
      throw new Error('connect ECONNREFUSED');
    }
    const row = this.rows.get(tag);
    if (!row) {
      return null;
    }
    row.maxId += BigInt(customStep === null ? row.step : Math.max(row.step, customStep));
    return { key: tag, maxId: row.maxId, step: row.step };
  }
}

/** Lets pending promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
  }
}

export function range(from: number, to: number): bigint[] {
  const out: bigint[] = [];
  for (let i = from; i <= to; i++) {
    out.push(BigInt(i));
  }
  return out;
}
