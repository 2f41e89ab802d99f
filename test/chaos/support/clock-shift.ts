export {};

/**
 * Preloaded into a service process (`NODE_OPTIONS=--require <build>/…/clock-shift.js`) to run it on
 * a machine whose clock is set `CLOCK_SHIFT_MS` off: `Date.now()` and `new Date()` read the shifted
 * time. The monotonic clocks (performance.now, process.hrtime) are left alone, as on such a machine.
 */
const shift = Number(process.env.CLOCK_SHIFT_MS ?? '0');
if (!Number.isInteger(shift)) {
  throw new Error(`CLOCK_SHIFT_MS must be an integer, got '${process.env.CLOCK_SHIFT_MS}'`);
}
if (shift !== 0) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) {
        super(realNow() + shift);
      } else {
        super(...(args as [string | number | Date]));
      }
    }

    static override now(): number {
      return realNow() + shift;
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
}
