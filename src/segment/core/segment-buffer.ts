import { Segment } from './segment';

/** What Leaf's `/cache` page shows of one tag, plus the dynamic-step state. */
export interface SegmentBufferView {
  key: string;
  initOk: boolean;
  nextReady: boolean;
  loading: boolean;
  pos: number;
  value0: string;
  max0: string;
  step0: number;
  value1: string;
  max1: string;
  step1: number;
  step: number;
  minStep: number;
  /** Time of the last fetch that set the step (ms since the epoch), 0 before the first preload. */
  updateTimestamp: number;
}

/**
 * Leaf's SegmentBuffer: two segments, the current one at `currentPos`, and the state of the
 * dynamic step. In Node no lock is needed: every state change below happens synchronously
 * between awaits. `loading` is the one DB fetch in flight for this tag (Leaf's threadRunning).
 */
export class SegmentBuffer {
  readonly segments: readonly [Segment, Segment] = [new Segment(), new Segment()];
  currentPos = 0;
  nextReady = false;
  initOk = false;
  step = 0;
  minStep = 0;
  updateTimestamp = 0;
  loading: Promise<boolean> | null = null;
  /** Why the last fetch failed; cleared by a successful one. */
  lastError: unknown = null;

  constructor(readonly key: string) {}

  get current(): Segment {
    return this.segments[this.currentPos];
  }

  get next(): Segment {
    return this.segments[this.nextPos()];
  }

  nextPos(): number {
    return (this.currentPos + 1) & 1;
  }

  switchPos(): void {
    this.currentPos = this.nextPos();
    this.nextReady = false;
  }

  /**
   * Leaf's trigger: more than 10 % of the current segment used (idle < 90 % of its step), the
   * next segment not ready and no fetch in flight.
   */
  needsPreload(): boolean {
    const current = this.current;
    return (
      this.initOk && !this.nextReady && this.loading === null && current.idle * 10n < BigInt(current.step) * 9n
    );
  }

  view(): SegmentBufferView {
    const [s0, s1] = this.segments;
    return {
      key: this.key,
      initOk: this.initOk,
      nextReady: this.nextReady,
      loading: this.loading !== null,
      pos: this.currentPos,
      value0: s0.value.toString(),
      max0: s0.max.toString(),
      step0: s0.step,
      value1: s1.value.toString(),
      max1: s1.max.toString(),
      step1: s1.step,
      step: this.step,
      minStep: this.minStep,
      updateTimestamp: this.updateTimestamp,
    };
  }
}
