import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { Clock } from './clock';
import { LEAF_LAYOUT, SnowflakeLayout, isValidWorkerId, timeBits, workerBits } from './snowflake-layout';

export interface GeneratorOptions {
  twepoch: number;
  workerId: number;
  /** Largest rollback (ms) waited out: wait 2× the offset, then retry once. */
  clockToleranceMs: number;
  /** A new millisecond starts its sequence at random(randomStartBound). */
  randomStartBound: number;
  /** The bit layout (default Leaf's 41/10/12). */
  layout?: SnowflakeLayout;
  /**
   * The time recorded for the worker id by its earlier holders (inclusive: they may have issued
   * IDs in that millisecond); no ID at or below it, even after a clock step back within the
   * tolerance. Default: none.
   */
  floor?: number;
  /**
   * Called synchronously with the generator's worker id before every run of IDs and again at
   * its end, before its IDs are returned (and so again after a rollback wait): throws when this
   * instance must not issue with that id now (a lease that can no longer be known to be held, or
   * an id that is no longer the one held).
   */
  guard?: (workerId: number) => void;
}

/** `random(bound)` → an integer in [0, bound). */
export type RandomInt = (bound: number) => number;

/** IDs issued per clock read within one millisecond (docs/performance.md). */
const IDS_PER_CLOCK_READ = 256;

export const mathRandomInt: RandomInt = (bound) => Math.floor(Math.random() * bound);

/**
 * Leaf's SnowflakeIDGenImpl.get without the framework: same millisecond → sequence + 1, a wrapped
 * sequence waits for the next millisecond, a new millisecond starts at a random value; a clock
 * moved back by ≤ tolerance is waited out (2× the offset), more is refused; a time outside the
 * 41-bit range is refused (Leaf does not check it: past the range its IDs wrap or turn
 * negative), so an ID is never negative or wrapped.
 *
 * JS is single-threaded: the synchronous part of `next` is the critical section; the only await
 * (the rollback wait) happens before any state changes.
 */
export class SnowflakeGenerator {
  private lastTimestamp = -1;
  private sequence = 0;
  /** The last ID issued: within a millisecond the next one is this + 1. */
  private lastId = 0n;
  private workerPart: bigint;
  private currentWorkerId: number;
  /**
   * IDs are issued only for timestamps below this: the time the registry has recorded as an upper
   * bound of this instance's IDs ("reserved until"). Raised after each successful report; a
   * restart waits until its clock is past the recorded time, so no ID can repeat after a crash.
   */
  private reservedUntil = -Infinity;
  private readonly layout: SnowflakeLayout;
  private readonly maxSequence: number;

  constructor(
    private readonly options: GeneratorOptions,
    private readonly clock: Clock,
    private readonly random: RandomInt = mathRandomInt,
  ) {
    this.layout = options.layout ?? LEAF_LAYOUT;
    this.maxSequence = this.layout.maxSequence;
    if (options.randomStartBound > this.maxSequence + 1) {
      throw new RangeError(`randomStartBound ${options.randomStartBound} exceeds the ${this.layout.name} layout's ${this.maxSequence + 1} sequences`);
    }
    this.currentWorkerId = checkWorkerId(options.workerId, this.layout);
    this.workerPart = workerBits(options.workerId, this.layout);
    this.respectFloor(options.floor ?? 0);
  }

  get workerId(): number {
    return this.currentWorkerId;
  }

  /** The timestamp (ms) of the last ID issued, or -1. */
  get lastIssuedTimestamp(): number {
    return this.lastTimestamp;
  }

  /** The exclusive upper bound of the timestamps this generator may issue (-Infinity: none). */
  get ceiling(): number {
    return this.reservedUntil;
  }

  /** Raises the ceiling to a time the registry has recorded (never lowers it). */
  raiseCeiling(recordedUntil: number): void {
    if (recordedUntil > this.reservedUntil) {
      this.reservedUntil = recordedUntil;
    }
  }

  /** Whether an ID with the current time may be issued (below the ceiling). */
  canIssueAt(now: number): boolean {
    return now < this.reservedUntil;
  }

  /** Stops issuing for good (graceful shutdown, before the last time is recorded). */
  stop(): void {
    this.reservedUntil = -Infinity;
  }

  /**
   * Moves to a fresh worker id (zk_recycle, redis) whose recorded time is `ceiling`: the ceiling
   * earned with the old id does not carry over, since the new id's record may be lower. `floor`
   * is the time its earlier holders recorded: no ID at or below it.
   */
  switchWorker(workerId: number, ceiling: number, floor: number): void {
    this.currentWorkerId = checkWorkerId(workerId, this.layout);
    // Within the same millisecond the next ID is lastId + 1: give lastId the new worker bits.
    this.lastId = (this.lastId & ~workerBits(this.layout.maxWorkerId, this.layout)) | workerBits(workerId, this.layout);
    this.workerPart = workerBits(workerId, this.layout);
    this.reservedUntil = ceiling;
    this.respectFloor(floor);
  }

  /**
   * Makes `floor` the last millisecond used, with its sequence spent: the next ID is in a later
   * millisecond, and a clock at or below the floor counts as moved back (waited out within the
   * tolerance, else refused).
   */
  private respectFloor(floor: number): void {
    if (floor > 0 && floor >= this.lastTimestamp) {
      this.lastTimestamp = floor;
      this.sequence = this.maxSequence;
    }
  }

  async next(): Promise<bigint> {
    const ids = await this.nextBatch(1);
    return ids[0];
  }

  /** `count` strictly increasing IDs. */
  async nextBatch(count: number): Promise<bigint[]> {
    const ids: bigint[] = [];
    while (ids.length < count) {
      const behindBy = this.fill(ids, count);
      if (behindBy > 0) {
        await this.clock.sleep(behindBy * 2);
        const stillBehind = this.lastTimestamp - this.clock.now();
        if (stillBehind > 0) {
          throw clockBackwards(stillBehind, 'after waiting');
        }
      }
    }
    return ids;
  }

  /**
   * Appends IDs until `count` or until the clock is found behind the last ID's time. Returns 0
   * when done, or the rollback offset (within tolerance) to wait out. Throws beyond tolerance.
   *
   * The guard is asked before the run and again after it, before any of its IDs can be returned:
   * the run is synchronous and a lease's deadline only moves forward, so both answers together
   * prove that every ID of the run was made while the lease was held (a process paused in the
   * middle of a run, past its deadline, returns none of it).
   */
  private fill(ids: bigint[], count: number): number {
    this.options.guard?.(this.currentWorkerId);
    const behindBy = this.fillRun(ids, count);
    this.options.guard?.(this.currentWorkerId);
    return behindBy;
  }

  private fillRun(ids: bigint[], count: number): number {
    while (ids.length < count) {
      let timestamp = this.clock.now();
      if (timestamp < this.lastTimestamp) {
        const offset = this.lastTimestamp - timestamp;
        if (offset > this.options.clockToleranceMs) {
          throw clockBackwards(offset, `beyond the tolerance of ${this.options.clockToleranceMs} ms`);
        }
        return offset;
      }
      this.assertBelowCeiling(timestamp);
      let sequence: number;
      if (timestamp === this.lastTimestamp) {
        sequence = (this.sequence + 1) & this.maxSequence;
        if (sequence === 0) {
          timestamp = this.tillNextMillis();
          if (timestamp < this.lastTimestamp) {
            continue;
          }
          sequence = this.random(this.options.randomStartBound);
        }
      } else {
        sequence = this.random(this.options.randomStartBound);
      }
      if (timestamp === this.lastTimestamp) {
        // Same millisecond: up to IDS_PER_CLOCK_READ IDs per clock read (a read costs ~100 ns on
        // a VM, four times the rest of an ID; the run takes a few µs), all in this sequence.
        let run = Math.min(count - ids.length, this.maxSequence - sequence + 1, IDS_PER_CLOCK_READ);
        this.sequence = sequence + run - 1;
        while (run-- > 0) {
          this.lastId += 1n;
          ids.push(this.lastId);
        }
        continue;
      }
      this.assertBelowCeiling(timestamp);
      const delta = timestamp - this.options.twepoch;
      const maxDelta = this.layout.maxTimeDelta;
      if (delta < 0 || delta > maxDelta) {
        throw new IdGenError(
          ErrorKind.SnowflakeTimeOverflow,
          `time ${timestamp} is outside the ${this.layout.timeBits}-bit range of twepoch ${this.options.twepoch} (0..${maxDelta} ms after it); refusing to issue a wrapped or negative ID`,
        );
      }
      this.lastTimestamp = timestamp;
      this.sequence = sequence;
      this.lastId = timeBits(delta, this.layout) | this.workerPart | BigInt(sequence);
      ids.push(this.lastId);
    }
    return 0;
  }

  private assertBelowCeiling(timestamp: number): void {
    if (timestamp >= this.reservedUntil) {
      throw new IdGenError(
        ErrorKind.SnowflakeLeaseLost,
        this.reservedUntil === -Infinity
          ? 'snowflake generator is stopped or has no recorded time yet; not issuing IDs'
          : `the time recorded in the worker-id registry (${new Date(this.reservedUntil).toISOString()}) could not be extended (registry unreachable, or the worker id taken over); not issuing IDs at or beyond it`,
      );
    }
  }

  /** Spins until the clock leaves the last ID's millisecond (or moves back, handled by the caller). */
  private tillNextMillis(): number {
    let timestamp = this.clock.now();
    while (timestamp === this.lastTimestamp) {
      timestamp = this.clock.now();
    }
    return timestamp;
  }
}

function checkWorkerId(workerId: number, layout: SnowflakeLayout): number {
  if (!isValidWorkerId(workerId, layout)) {
    throw new IdGenError(ErrorKind.SnowflakeStartRefused, `worker id must be 0..${layout.maxWorkerId} in the ${layout.name} layout, got ${workerId}`);
  }
  return workerId;
}

function clockBackwards(offset: number, detail: string): IdGenError {
  return new IdGenError(
    ErrorKind.SnowflakeClockBackwards,
    `clock moved backwards by ${offset} ms (${detail}); refusing to issue IDs until it catches up`,
  );
}
