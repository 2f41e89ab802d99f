import { checkPatternForReset, parsePattern } from '../../../src/numbers/core/number-pattern';
import { Allocation, AllocationRequest, ClockReading, NumberStore, segmentSize } from '../../../src/numbers/core/number-store';
import { ResetPeriod, allocationPeriod, parseDbTime } from '../../../src/numbers/core/period';
import { InstanceClock, Instant } from '../../../src/numbers/core/number-clock';

/** The instance clocks the test moves; `offset` shifts what both read (another machine's clocks). */
export class FakeClock implements InstanceClock {
  constructor(
    private readonly world: World,
    private readonly offset = 0,
  ) {}

  now(): Instant {
    // Two readings of a real monotonic clock are never equal: a nanosecond passes between any two.
    this.world.mono += 1e-6;
    return { mono: this.world.mono + this.offset, wall: this.world.wall + this.offset };
  }
}

/**
 * Real time as the test moves it: the database clock and every instance's clocks advance together,
 * except across a suspend (the instances' monotonic clocks stand still) and a wall clock step.
 */
export class World {
  mono = 0;
  wall = 1_700_000_000_000;

  constructor(public dbMs: number) {}

  advance(ms: number): void {
    this.mono += ms;
    this.wall += ms;
    this.dbMs += ms;
  }

  /** The instances' machine sleeps for `ms`: their monotonic clocks stop, everything else runs. */
  suspend(ms: number): void {
    this.wall += ms;
    this.dbMs += ms;
  }

  /** The instances' wall clocks are stepped by `ms` (NTP, an operator); no time passes. */
  stepWall(ms: number): void {
    this.wall += ms;
  }
}

interface Format {
  pattern: string;
  reset: ResetPeriod;
  step: number;
}

/**
 * The database in memory: formats, the (key, period) sequences and the clock, with the same rules
 * as NumberFormatRepository (period from the clock read under the lock, never backwards; capped at
 * the pattern's capacity; segment size by segmentSize). `gate`, when set, holds every call until
 * the test opens it (a slow database while time passes).
 */
export class FakeNumberStore implements NumberStore {
  readonly formats = new Map<string, Format>();
  readonly sequences = new Map<string, bigint>();
  allocations = 0;
  clockReads = 0;
  failure: Error | null = null;
  gate: Promise<void> | null = null;

  constructor(readonly world: World) {}

  define(key: string, pattern: string, reset: ResetPeriod, step = 10): void {
    checkPatternForReset(parsePattern(pattern), reset);
    this.formats.set(key, { pattern, reset, step });
  }

  async allocate(key: string, request: AllocationRequest): Promise<Allocation> {
    await this.pass();
    this.allocations++;
    const format = this.formats.get(key);
    if (!format) {
      return { kind: 'not-found' };
    }
    const keys = [...this.sequences.keys()].filter((k) => k.startsWith(`${key}|`)).map((k) => k.slice(key.length + 1));
    const latest = keys.length === 0 ? null : keys.sort().at(-1)!;
    const period = allocationPeriod(format.reset, this.world.dbMs, latest);
    const capacity = parsePattern(format.pattern).capacity;
    const old = this.sequences.get(`${key}|${period.key}`) ?? 0n;
    const base = { pattern: format.pattern, reset: format.reset, period: period.key, dbNow: dbText(this.world.dbMs) };
    if (old >= capacity) {
      return { kind: 'exhausted', ...base };
    }
    const size = segmentSize(format.step, request, capacity);
    const to = old + size > capacity ? capacity : old + size;
    this.sequences.set(`${key}|${period.key}`, to);
    return { kind: 'allocated', ...base, from: old + 1n, to };
  }

  async readClock(key: string): Promise<ClockReading> {
    await this.pass();
    this.clockReads++;
    const format = this.formats.get(key);
    return { dbNow: dbText(this.world.dbMs), format: format ? { pattern: format.pattern, reset: format.reset } : null };
  }

  private async pass(): Promise<void> {
    await Promise.resolve();
    if (this.gate) {
      await this.gate;
    }
    if (this.failure) {
      throw this.failure;
    }
  }
}

/** Database local ms → the database's text, `YYYY-MM-DD HH:MM:SS.ffffff`. */
export function dbText(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000`;
}

export { parseDbTime };
